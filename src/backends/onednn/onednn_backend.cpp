// The `onednn` backend: oneDNN CPU primitives, one file per op family (onednn_*.cpp). Every
// operand is described to oneDNN by its own strides (transposes, padded leading dimensions,
// broadcast batches, strided inputs), so the library's layout handling is what gets tested:
// no copies on our side, except C, which the sum post-op reads from dst. prepare() creates
// the primitive, so a case's kernel time is the primitive's execution alone.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/onednn/onednn_plan.hpp"
#include "backends/op_handlers.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

using namespace onednn;

using ops::common_gemm::activation;

// The plan builder of each op the backend runs; onednn_winograd runs conv2d alone.
const detail::op_handlers<plan_builder>& builders(bool winograd) {
  static const detail::op_handlers<plan_builder> winograd_builders("onednn_winograd", {{"conv2d", conv2d_winograd_plan}});
  static const detail::op_handlers<plan_builder> all(
      "onednn", {{"matmul", matmul_plan},
                 {"conv2d", conv2d_plan},
                 {"layer_norm", layer_norm_plan},
                 {"reduce", reduce_plan},
                 {"softmax", softmax_plan(dnnl::algorithm::softmax_accurate)},
                 {"log_softmax", softmax_plan(dnnl::algorithm::softmax_log)},
                 {"relu", eltwise_plan([](const problem&) { return activation::relu; })},
                 {"gelu", eltwise_plan([](const problem& p) {
                    return p.get_choice("approximate") == "tanh" ? activation::gelu_tanh : activation::gelu;
                  })},
                 {"silu", eltwise_plan([](const problem&) { return activation::silu; })},
                 {"add", binary_plan(dnnl::algorithm::binary_add)},
                 {"mul", binary_plan(dnnl::algorithm::binary_mul)},
                 {"max_pool2d", pool_plan([](const problem&) { return dnnl::algorithm::pooling_max; })},
                 {"avg_pool2d", pool_plan([](const problem& p) {
                    return p.get_bool("count_include_pad") ? dnnl::algorithm::pooling_avg_include_padding
                                                           : dnnl::algorithm::pooling_avg_exclude_padding;
                  })},
                 {"global_avg_pool",
                  pool_plan([](const problem&) { return dnnl::algorithm::pooling_avg_exclude_padding; })}});
  return winograd ? winograd_builders : all;
}

bool reduced_precision(const contract& c) {
  return c.src == dtype::bf16 || c.src == dtype::f16 || c.wei == dtype::bf16 || c.wei == dtype::f16 ||
         c.dst == dtype::bf16 || c.dst == dtype::f16;
}

// Views of operand descriptions or of tensors.
template <class Range>
std::vector<operand_view> views(const Range& xs) {
  std::vector<operand_view> v;
  for (const auto& x : xs) v.push_back(view_of(x));
  return v;
}

// Copies every logical element of src into dst (same shape and type): C into dst for the
// sum post-op. Element by element through the strides, as both may be padded.
void copy_elements(const tensor& src, tensor& dst) {
  const std::size_t bytes = src.element_size();
  const auto* s = static_cast<const std::byte*>(src.data());
  auto* d = static_cast<std::byte*>(dst.data());
  for (std::int64_t i = 0; i < src.numel(); ++i) {
    const dims idx = src.unravel(i);
    std::int64_t so = 0, doff = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) so += idx[k] * src.strides()[k], doff += idx[k] * dst.strides()[k];
    std::copy_n(s + so * static_cast<std::int64_t>(bytes), bytes, d + doff * static_cast<std::int64_t>(bytes));
  }
}

// The instruction set oneDNN dispatches to on this CPU, in its own names: which data types it
// runs (bf16 needs avx512_core on oneDNN 2.6) and how int8 products are summed (vpmaddubsw
// saturates in 16 bits before VNNI) follow from it, so verdicts are read against it.
std::string effective_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

class onednn_backend final : public backend {
 public:
  /// `winograd`: the onednn_winograd backend, conv2d with algorithm::convolution_winograd only.
  explicit onednn_backend(bool winograd = false) : winograd_(winograd), eng_(dnnl::engine::kind::cpu, 0), stream_(eng_) {}

  std::string name() const override { return winograd_ ? "onednn_winograd" : "onednn"; }
  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
           " (" + v->hash + "), isa " + effective_isa_name();
  }

  support supports(const problem& p) const override {
    const plan_builder* build = builders(winograd_).find(p);
    if (!build) return builders(winograd_).unimplemented(p);
    const op_spec& spec = p.spec();
    try {
      (*build)(p, views(spec.inputs(p)), views(spec.outputs(p)), eng_);
      return support::yes();
    } catch (const refusal& r) {
      return r.s;
    } catch (const dnnl::error& e) {
      // oneDNN has no kernel for this type on this CPU: its own words say why.
      if (reduced_precision(p.dt)) return support::skipped("oneDNN: " + std::string(e.what()));
      return support::unimplemented("oneDNN refused " + std::string(p.op()) + ": " + e.what());
    }
  }

  // Builds the plan for these very tensors and creates its primitive (oneDNN's kernel
  // selection and JIT code generation happen here, outside the kernel's time).
  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    const plan_builder& build = builders(winograd_).at(p);
    try {
      plan_ = build(p, views(in), views(out), eng_);
    } catch (const refusal& r) {
      throw error("onednn: prepare called for an unsupported problem: " + r.s.reason);
    }
    primitive_ = dnnl::primitive(plan_.pd.get());
    if (plan_.copy_to_dst) copy_elements(in[*plan_.copy_to_dst], out[0]);
    args_.clear();
    staged_in_.clear();
    staged_out_.clear();
    for (const binding& b : plan_.args) {
      void* ptr = b.output ? out[b.index].data() : const_cast<void*>(in[b.index].data());
      if (!b.staged) {
        args_.emplace(b.arg, dnnl::memory(b.md, eng_, ptr));
        continue;
      }
      // The primitive's own layout in a scratch memory, reordered from / to the tensor.
      const dnnl::memory user(b.user_md, eng_, ptr), scratch(b.md, eng_);
      args_.emplace(b.arg, scratch);
      if (b.output) staged_out_.push_back({dnnl::reorder(scratch, user), scratch, user});
      else staged_in_.push_back({dnnl::reorder(user, scratch), user, scratch});
    }
    bind_owned(plan_.owned_f32, tag_dt::f32);
    bind_owned(plan_.owned_s32, tag_dt::s32);
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    if (!primitive_) throw error("onednn: execute called before prepare");
    for (auto& r : staged_in_) r.run.execute(stream_, r.from, r.to);
    primitive_.execute(stream_, args_);
    for (auto& r : staged_out_) r.run.execute(stream_, r.from, r.to);
    const std::string reorders = staged_in_.empty() && staged_out_.empty() ? "" : ", with reorders";
    return {"oneDNN " + std::string(plan_.pd.impl_info_str()) + " (fpmath " + plan_.fpmath + reorders + ")", ""};
  }

  std::optional<double> synchronize(std::span<tensor>) override {
    stream_.wait();
    return std::nullopt;
  }

 private:
  // Host arrays the plan owns (scales, zero points) as 1-D oneDNN memories.
  template <class T>
  void bind_owned(std::vector<std::pair<int, std::vector<T>>>& owned, tag_dt type) {
    for (auto& [arg, values] : owned) {
      const dnnl::memory::desc md({static_cast<dnnl::memory::dim>(values.size())}, type, dnnl::memory::format_tag::x);
      args_.emplace(arg, dnnl::memory(md, eng_, values.data()));
    }
  }

  bool winograd_ = false;
  dnnl::engine eng_;
  dnnl::stream stream_;
  plan plan_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
  // Reorders of staged bindings, created in prepare: tensor -> scratch before, scratch -> tensor after.
  struct staging {
    dnnl::reorder run;
    dnnl::memory from, to;
  };
  std::vector<staging> staged_in_, staged_out_;
};

std::unique_ptr<backend> make_onednn() { return std::make_unique<onednn_backend>(); }
std::unique_ptr<backend> make_onednn_winograd() { return std::make_unique<onednn_backend>(true); }

}  // namespace

OPVAL_REGISTER_BACKEND(onednn, make_onednn);
OPVAL_REGISTER_BACKEND(onednn_winograd, make_onednn_winograd);

}  // namespace opval
