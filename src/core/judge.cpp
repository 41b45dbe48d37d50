#include "opval/judge.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/array_files.hpp"
#include "core/output_judging.hpp"
#include "core/timed.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

// What `type` means as an element type: NumPy's kind letter ('f', 'i', 'u', 'b', 'V'), size and
// byte order, or an opval dtype.
struct stored_type {
  char kind = 0;  // 0: an opval dtype name
  int size = 0;
  bool big_endian = false;
  dtype named = dtype::f32;
};

stored_type parse_stored_type(const std::string& type) {
  stored_type s;
  if (type.size() >= 3 && std::string_view("<>|=").find(type[0]) != std::string_view::npos) {
    s.big_endian = type[0] == '>';
    s.kind = type[1];
    const char* digits = type.data() + 2;
    const auto [end, ec] = std::from_chars(digits, type.data() + type.size(), s.size);
    if (std::string_view("fiubV").find(s.kind) == std::string_view::npos || ec != std::errc() ||
        end != type.data() + type.size() || s.size <= 0)
      throw error(fmt::format("element type '{}' is none opval reads (floating, integer, bool or raw records)", type));
    return s;
  }
  s.named = parse_dtype(type);
  s.size = traits(s.named).size_bytes;
  return s;
}

// NumPy's kind and size for an opval type, as np.save writes it; kind 0 for the types NumPy
// saves as raw records (bf16 and f8_e4m3 through ml_dtypes: '<V2', '<V1').
std::pair<char, int> numpy_kind(dtype t) {
  switch (t) {
    case dtype::f64: return {'f', 8};
    case dtype::f32:
    case dtype::tf32: return {'f', 4};  // tf32 is stored as float32
    case dtype::f16: return {'f', 2};
    case dtype::i8: return {'i', 1};
    case dtype::u8: return {'u', 1};
    case dtype::i32: return {'i', 4};
    case dtype::i64: return {'i', 8};
    case dtype::boolean: return {'b', 1};
    case dtype::f8_e5m2: return {'f', 1};  // ml_dtypes' float8_e5m2 is a NumPy float kind: '<f1'
    default: return {0, traits(t).size_bytes};
  }
}

bool fits(const stored_type& s, dtype want) {
  if (s.kind == 0) return s.named == want || (want == dtype::tf32 && s.named == dtype::f32);
  if (s.kind == 'V') return s.size == traits(want).size_bytes;
  return numpy_kind(want) == std::pair<char, int>{s.kind, s.size};
}

std::string type_mismatch(const array_data& a, const operand& op, std::string_view role) {
  const bool numpy_lacks = numpy_kind(op.type).first == 0;
  return fmt::format("{} '{}': the array is stored as '{}', the contract's type for it is {}{}", role, op.name, a.type,
                     to_string(op.type),
                     numpy_lacks ? fmt::format(" (or its raw bits: NumPy saves ml_dtypes' {} arrays as '<V{}' records)",
                                               to_string(op.type), traits(op.type).size_bytes)
                                 : "");
}

// The array's bytes as a contiguous tensor of the operand's type, byte-swapped when stored
// big-endian.
tensor to_tensor(const array_data& a, const operand& op, std::string_view role) {
  const stored_type s = parse_stored_type(a.type);
  if (!fits(s, op.type)) throw error(type_mismatch(a, op, role));
  if (a.shape != op.shape)
    throw error(fmt::format("{} '{}': the array's shape is [{}], the problem's is [{}]", role, op.name,
                            fmt::join(a.shape, ","), fmt::join(op.shape, ",")));
  tensor t(op.type, op.shape);
  const std::size_t bytes = static_cast<std::size_t>(t.numel()) * t.element_size();
  if (a.bytes.size() != bytes)
    throw error(fmt::format("{} '{}': {} bytes of data for {} elements of {} ({} bytes)", role, op.name,
                            a.bytes.size(), t.numel(), to_string(op.type), bytes));
  if (bytes) std::memcpy(t.data(), a.bytes.data(), bytes);
  if (s.big_endian && t.element_size() > 1) {
    auto* p = static_cast<std::byte*>(t.data());
    for (std::size_t i = 0; i < bytes; i += t.element_size()) std::reverse(p + i, p + i + t.element_size());
  }
  return t;
}

std::string names_of(const std::vector<operand>& operands) {
  std::vector<std::string> names;
  for (const operand& o : operands) names.push_back(o.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void check_tensors(const std::vector<operand>& operands, std::span<const tensor> ts, std::string_view role) {
  if (ts.size() != operands.size())
    throw error(fmt::format("{} {}s given, the problem has {} ({})", ts.size(), role, operands.size(), names_of(operands)));
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].type() != operands[i].type)
      throw error(fmt::format("{} '{}' is {}, the contract's type for it is {}", role, operands[i].name,
                              to_string(ts[i].type()), to_string(operands[i].type)));
    if (ts[i].shape() != operands[i].shape)
      throw error(fmt::format("{} '{}' has shape [{}], the problem's is [{}]", role, operands[i].name,
                              fmt::join(ts[i].shape(), ","), fmt::join(operands[i].shape, ",")));
  }
}

// A fill's promises, read from the data. One-signed: an input whose nonzero elements share one
// sign (activations after a ReLU, a positive scale) may feed sums that do not cancel, whose
// rounding errors are not the independent, mean-zero kind the probabilistic accumulation
// bound assumes: the deterministic bound, which is wider, never narrower (a kernel run assumes
// the same of fill=positive). An all-zero input says nothing. Special values: NaN, infinities
// or subnormals. Exactness is never assumed.
fill_traits traits_of_data(std::span<const tensor> ins) {
  fill_traits f;
  for (const tensor& t : ins) {
    if (t.type() == dtype::boolean || t.numel() == 0) continue;
    bool negative = false, positive = false;
    const double smallest_normal = traits(t.type()).is_float ? traits(t.type()).min_normal : 0.0;
    for (double x : t.to_vector()) {
      if (!std::isfinite(x) || (x != 0 && std::fabs(x) < smallest_normal)) f.has_specials = true;
      negative = negative || x < 0;
      positive = positive || x > 0;
    }
    f.same_sign = f.same_sign || negative != positive;
  }
  return f;
}

// Whether an output repeats its values so heavily (fewer distinct finite values than a tenth
// of its elements, as constant rows do) that its rounding errors are not independent: the
// bias test, which assumes they are, does not apply. Lighter repetition is the compare
// engine's: its z-test counts distinct values, not elements.
bool repeats_values(const tensor& ref) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(ref.numel()));
  for (std::int64_t i = 0; i < ref.numel(); ++i)
    if (const double x = ref.at(i); std::isfinite(x)) v.push_back(x);
  std::sort(v.begin(), v.end());
  const auto distinct = static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
  return 10 * distinct < v.size();
}

// judge() of tensors in memory has no command that replays it; judge_files() gives its own.
constexpr const char* in_memory_repro =
    "(judged tensors in memory: save them, e.g. with np.savez, to replay with `opval judge`)";

constexpr const char* kernel_checks_not_applicable =
    "memory guards, input writes, poisoned outputs, determinism, thread counts, perturbation and leaks: they "
    "rerun the kernel";

// The reference's results, or the reason there are none (the case is then SKIPPED).
bool compute_references(const problem& p, std::span<const tensor> ins, const run_options& o,
                        std::vector<tensor>& refs, reference_values& alt, case_result& r) {
  if (o.reference)
    if (support s = reference_support(*o.reference, p); !s.ok) {
      r.v.st = s.st;
      r.v.reason = s.reason;
      return false;
    }
  if (!detail::alternative_outputs(p, ins, o, alt, r)) return false;
  refs = detail::reference_tensors(p.spec().outputs(p));
  detail::timed(detail::phase::reference, r.times.reference, [&] { p.spec().reference(p, ins, refs); });
  return true;
}


}  // namespace

std::optional<dtype> dtype_of_stored(const std::string& type) {
  const stored_type s = parse_stored_type(type);
  if (s.kind == 'V' || s.big_endian) return std::nullopt;  // raw records or swapped bytes name no one type
  for (const dtype t : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::f8_e4m3, dtype::f8_e5m2, dtype::i8,
                        dtype::u8, dtype::i32, dtype::i64, dtype::boolean})
    if (fits(s, t)) return t;
  return std::nullopt;
}

std::vector<tensor> bind_arrays(const std::vector<operand>& operands, std::span<const array_data> arrays,
                                std::string_view role) {
  for (auto a = arrays.begin(); a != arrays.end(); ++a)
    if (std::any_of(arrays.begin(), a, [&](const array_data& b) { return b.name == a->name; }))
      throw error(fmt::format("array '{}' is given twice for the problem's {}s", a->name, role));
  for (const array_data& a : arrays)
    if (std::none_of(operands.begin(), operands.end(), [&](const operand& o) { return o.name == a.name; }) &&
        !(operands.size() == 1 && arrays.size() == 1))
      throw error(fmt::format("array '{}' names no {} of the problem (its {}s: {})", a.name, role, role,
                              names_of(operands)));
  std::vector<tensor> out;
  for (const operand& op : operands) {
    auto it = std::find_if(arrays.begin(), arrays.end(), [&](const array_data& a) { return a.name == op.name; });
    if (it == arrays.end() && operands.size() == 1 && arrays.size() == 1) it = arrays.begin();
    if (it == arrays.end())
      throw error(fmt::format("no array for {} '{}' (the problem's {}s: {})", role, op.name, role, names_of(operands)));
    out.push_back(to_tensor(*it, op, role));
  }
  return out;
}

case_result judge(const problem& p, std::span<const tensor> inputs, std::span<const tensor> outputs,
                  const run_options& o, const std::string& source) {
  const auto start = detail::steady::now();
  const op_spec& spec = p.spec();
  check_tensors(spec.inputs(p), inputs, "input");
  check_tensors(spec.outputs(p), outputs, "output");
  case_result r;
  static_cast<case_identity&>(r) = identify(p, "judge", o, source);
  const detail::profiler_range case_range(r.descriptor);
  r.not_applicable = kernel_checks_not_applicable;
  r.repro = in_memory_repro;
  try {
    std::vector<tensor> refs;
    reference_values alt;
    if (compute_references(p, inputs, o, refs, alt, r)) {
      fill_traits ft = traits_of_data(inputs);
      ft.repeated_values = std::any_of(refs.begin(), refs.end(), repeats_values);
      const std::vector<tensor> outs(outputs.begin(), outputs.end());
      const detail::judging_input in{.p = p, .ft = ft, .ins = inputs, .refs = refs,
                                     .alt = o.reference ? &alt : nullptr, .outs = outs};
      detail::judge_outputs(in, o, r);
    }
  } catch (const std::exception& e) {
    r.v.st = state::failed;
    r.v.reason = std::string("error while judging: ") + e.what();
  }
  r.times.total = detail::seconds_since(start);
  return r;
}

namespace detail {

std::vector<tensor> bounds_at(const problem& p, std::span<const tensor> inputs, const run_options& o) {
  const op_spec& spec = p.spec();
  check_tensors(spec.inputs(p), inputs, "input");
  std::vector<tensor> refs = reference_tensors(spec.outputs(p));
  spec.reference(p, inputs, refs);
  fill_traits ft = traits_of_data(inputs);
  ft.repeated_values = std::any_of(refs.begin(), refs.end(), repeats_values);
  run_options plain = o;
  plain.reference.reset();  // the bound of opval's own reference
  case_result scratch;
  const judging_input in{.p = p, .ft = ft, .ins = inputs, .refs = refs, .alt = nullptr, .outs = refs,
                         .observe_precision = false};
  std::vector<tensor> totals;
  for (judgement& j : judge_outputs(in, plain, scratch)) totals.push_back(std::move(j.total));
  return totals;
}

}  // namespace detail

namespace {

std::string files_source(const std::vector<std::string>& input_files, const std::vector<std::string>& output_files) {
  return fmt::format("inputs {}; outputs {}", fmt::join(input_files, ", "), fmt::join(output_files, ", "));
}

// A judgement of files carries them, and the `opval judge` command of them as its repro.
void of_files(case_result& r, const std::vector<std::string>& input_files, const std::vector<std::string>& output_files) {
  r.input_files = input_files;
  r.output_files = output_files;
  r.repro = render_repro(r);
}

}  // namespace

case_result judge_files(const problem& p, const std::vector<std::string>& input_files,
                        const std::vector<std::string>& output_files, const run_options& o) {
  const std::vector<tensor> ins = bind_arrays(p.spec().inputs(p), read_array_files(input_files), "input");
  const std::vector<tensor> outs = bind_arrays(p.spec().outputs(p), read_array_files(output_files), "output");
  case_result r = judge(p, ins, outs, o, files_source(input_files, output_files));
  of_files(r, input_files, output_files);
  return r;
}

case_result unfinished_judgement(const problem& p, const std::vector<std::string>& input_files,
                                 const std::vector<std::string>& output_files, const run_options& o, state st,
                                 std::string reason) {
  case_result r;
  static_cast<case_identity&>(r) = identify(p, "judge", o, files_source(input_files, output_files));
  r.not_applicable = kernel_checks_not_applicable;
  r.v.st = st;
  r.v.reason = std::move(reason);
  of_files(r, input_files, output_files);
  return r;
}

}  // namespace opval
