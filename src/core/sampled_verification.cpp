// Sampled verification (core/sampled_verification.hpp).
#include "core/sampled_verification.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/output_judging.hpp"
#include "core/timed.hpp"

namespace opval::detail {
namespace {

// Why p is verified in full although the user asked for sampled verification ("" when it can
// be sampled as far as the options go; the op may still have no sample for it).
std::string why_full(const run_options& o) {
  if (o.reference) return "an alternative reference judges every element";
  if (o.pol.kind != policy_kind::bound) return "only the bound policy's per-element bounds carry over to a sample";
  return {};
}

// The elements of `t` at row-major positions `where`, as a contiguous tensor of shape `shape`.
tensor gather(const tensor& t, const dims& shape, const std::vector<std::int64_t>& where) {
  tensor g(t.type(), shape);
  const std::size_t es = t.element_size();
  const auto* from = static_cast<const std::byte*>(t.data());
  auto* to = static_cast<std::byte*>(g.data());
  for (std::size_t i = 0; i < where.size(); ++i) {
    std::int64_t rest = where[i], offset = 0;  // the element's storage offset, from its row-major position
    for (int d = t.rank() - 1; d >= 0; --d) {
      offset += rest % t.shape()[std::size_t(d)] * t.strides()[std::size_t(d)];
      rest /= t.shape()[std::size_t(d)];
    }
    std::memcpy(to + i * es, from + offset * std::int64_t(es), es);
  }
  return g;
}

// The row-major position of `index` in `shape`.
std::int64_t ravel(const dims& shape, const dims& index) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) at = at * shape[d] + index[d];
  return at;
}

std::string sample_text(const problem& p, const output_sample& s) {
  std::int64_t sampled = 0, all = 0;
  const std::vector<operand> outs = p.spec().outputs(p);
  for (std::size_t i = 0; i < outs.size(); ++i) sampled += std::int64_t(s.where[i].size()), all += element_count(outs[i].shape);
  return fmt::format("{} of {} output elements ({:.3g}%) against the fp64 reference under the full check's "
                     "per-element bound: {}", sampled, all, all ? 100.0 * double(sampled) / double(all) : 0.0,
                     s.coverage);
}

// The checksums' results as tests of their outputs: a failing one fails the output and the case.
void add_checksums(std::vector<checksum_result> sums, case_result& r) {
  std::string methods;
  for (checksum_result& c : sums) {
    output_verdict& ov = r.v.outputs.at(c.output);
    output_check check{.name = c.name, .st = c.passed ? state::passed : state::failed, .bound = c.method};
    if (!c.passed) {
      check.reason = fmt::format("{}: {}", c.name, c.reason);
      ov.reason = ov.st == state::passed ? check.reason : fmt::format("{}; {}", ov.reason, check.reason);
      ov.st = worst_state(ov.st, state::failed);
      r.v.st = worst_state(r.v.st, state::failed);
      if (r.v.reason.empty() || r.v.st == state::failed) r.v.reason = ov.reason;
    }
    ov.checks.push_back(std::move(check));
    methods += fmt::format("{}{} of output '{}': {}; {}", methods.empty() ? "" : "; ", c.name, ov.name, c.method,
                           c.guarantee);
  }
  r.verified.checksums = methods;
}

}  // namespace

std::optional<output_sample> draw_sample(const problem& p, std::span<const tensor> ins, const run_options& o,
                                         case_result& r) {
  if (o.verify == "full") return std::nullopt;
  const bool asked = o.verify == "sampled";
  const double flops = p.spec().counts(p).flops;
  if (!asked && flops < sampled_verification_flops) return std::nullopt;
  if (std::string why = why_full(o); !why.empty()) {
    if (asked) r.verified.why = fmt::format("verified in full: {}", why);
    return std::nullopt;
  }
  std::optional<output_sample> s = p.spec().sample(p, ins, o.seed);
  if (!s) {
    r.verified.why = fmt::format("verified in full: {} has no sampled verification for this problem", p.op());
    return std::nullopt;
  }
  r.verified.why = asked ? "asked for (--verify sampled)"
                         : fmt::format("{:.3g} FLOPs, from {:.3g} up --verify auto samples", flops,
                                       sampled_verification_flops);
  return s;
}

void judge_by_sample(const problem& p, const fill_traits& ft, std::span<const tensor> ins, const output_sample& s,
                     const std::vector<tensor>& outs, const run_options& o, case_result& r) {
  const op_spec& spec = p.spec();
  const std::vector<operand> sub_ops = spec.outputs(s.sub);
  std::vector<tensor> sub_outs;
  for (std::size_t i = 0; i < outs.size(); ++i) sub_outs.push_back(gather(outs[i], sub_ops[i].shape, s.where[i]));
  std::vector<tensor> refs = reference_tensors(sub_ops);
  timed(phase::reference, r.times.reference, [&] { spec.reference(s.sub, s.inputs, refs); });
  const judging_input judged{.p = s.sub, .ft = ft, .ins = s.inputs, .refs = refs, .outs = sub_outs,
                             .observe_precision = r.backend != "sim",
                             .place = [&](std::size_t i, const dims& index) {
                               return outs[i].unravel(s.where[i][std::size_t(ravel(sub_ops[i].shape, index))]);
                             }};
  judge_outputs(judged, o, r);
  const bound_options bo{o.pol.false_alarm, o.pol.random_data};
  add_checksums(timed(phase::compare, r.times.compare, [&] { return spec.checksums(p, ft, bo, ins, outs, o.seed); }),
                r);
  r.verified.method = "sampled";
  r.verified.sample = sample_text(p, s);
  r.not_applicable = "sampled verification runs the kernel once: no determinism, output-overwrite or MISTRUSTED "
                     "perturbation check (--verify full makes them)";
}

}  // namespace opval::detail
