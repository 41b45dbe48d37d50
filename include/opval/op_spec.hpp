#pragma once
// The specification of one operator: attributes, shapes, counts, fill, fp64 reference,
// contract-exact emulation and error model. One implementation per folder under src/ops/.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/attr.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval {

/// Forward now; backward ops get their own direction without reshaping the API.
enum class direction : std::uint8_t { forward, backward_data, backward_weights };

/// One operand: name, storage type, logical shape and memory layout (strides, offset).
struct operand {
  std::string name;
  dtype type = dtype::f32;
  dims shape;
  layout lay;
};

/// A known way for a kernel to compute an op wrongly, as a mechanism (e.g. int8 products summed
/// in saturating int16 pairs, as x86 does without VNNI): a failed case whose every output
/// element matches its simulation is explained by it (docs/NUMERICS.md, "Explaining a failure").
struct kernel_hypothesis {
  std::string explanation;  ///< one line naming the mechanism
  /// The outputs the mechanism gives on `in` (outputs allocated as op_spec::outputs says).
  std::function<void(const problem&, std::span<const tensor>, std::span<tensor>)> simulate;
};

/// Work of one case: floating-point (or integer) operations and bytes moved (inputs read
/// once, outputs written once), for throughput figures.
struct op_counts {
  double flops = 0;
  double bytes = 0;
};

/// What a fill guarantees about the data; error models rely on it.
struct fill_traits {
  bool same_sign = false;     ///< sums of products do not cancel: the probabilistic bound is void
  bool exact = false;         ///< every intermediate is exactly representable: results are exact
  bool has_specials = false;  ///< NaN / Inf / -0 / subnormals present
  /// Many outputs repeat the same values (constant rows): their rounding errors are not
  /// independent, so the rounding-bias z-test would see a false effect and is skipped.
  bool repeated_values = false;
  /// Each value's sign is a fair coin independent of its magnitude and of every other value
  /// (opval's own symmetric random fills): sums of such values, added in an order that does
  /// not depend on them, get the sharper probabilistic bound (docs/NUMERICS.md).
  bool random_signs = false;
};

/// One feature of an op's generated suites (docs/COVERAGE.md): a name and its value classes,
/// each a descriptor fragment ("causal=top_left", "shape=37x41 stride_pad=3 step=2",
/// "fill=special", "denorm=ftz"). The feature's base value is the table's base problem, not
/// listed. Two values that set the same key differently are never combined.
struct suite_feature {
  std::string name;
  std::vector<std::string> values;
};

/// What an op's generated suites are made of: a base problem, the contracts, the features.
/// The generator (src/core/suite_generator.hpp) puts every value alone on the base at each
/// contract the kernel supports, then combines pairs of values within a case budget.
struct feature_table {
  std::string base;                    ///< every feature at its base value ("m=17 n=33 k=65")
  std::vector<std::string> contracts;  ///< contract texts, options included ("bf16:f32:bf16 mid=bf16")
  std::vector<suite_feature> features;
  /// Attributes a candidate needs for the rest it sets (matmul's quantization scales, from its
  /// contract and k), as a fragment whose keys are added where the candidate does not set them.
  std::function<std::string(const problem&)> complete;
  /// Why a candidate, though valid, tests nothing or cannot be judged ("" when it is a case):
  /// e.g. a tie-breaking fill on a type too coarse for the rounding-bias test. Counted as not
  /// applicable, with this reason.
  std::function<std::string(const problem&)> not_meaningful;
};

/// Settings that error models need from the policy.
struct bound_options {
  double false_alarm = 1e-6;  ///< allowed probability that a correct kernel fails one case
  /// Use the sharper bound for sums of random-sign data (fill_traits::random_signs); off for a
  /// kernel whose order of additions depends on the values (sorting them, say).
  bool random_data = true;
};

/// The error bound of one output: per element, a bound on |kernel result before the final
/// rounding to dst - fp64 reference|. The framework adds the output rounding term.
struct error_bound {
  tensor compute;         ///< f64, the output's shape
  std::string formula;    ///< how it was derived, with the constants used
  bool meaningful = true; ///< false where no bound means anything (K*u_acc >= 0.5)
  std::string why_not;    ///< the reason, when not meaningful
  /// The op rounds this output in one direction its attributes choose (cast's e8m0_round=up or
  /// down), not to nearest: the runner allows a whole ulp of dst and skips the bias test.
  bool directed_rounding = false;
};

/// A second test of one output that needs the kernel's own values (op_spec::posterior): the
/// output transformed so that an error a correct kernel shares across a group of elements
/// cancels, with the exact transformed values and a bound on the difference. softmax divides
/// each row by the kernel's own row sum: the denominator's error, common to the row, drops
/// out, and the bound needs no n*u. The element-wise test stays; this one is stricter where
/// the shared error dominates.
struct posterior_check {
  std::size_t output = 0;  ///< which output it judges
  std::string name;        ///< short, e.g. "row shape"
  tensor got;              ///< f64, the output's shape: the kernel's output transformed
  tensor expected;         ///< f64: the exact output transformed the same way
  tensor bound;            ///< f64: the total bound on |got - expected| (roundings included)
  std::string formula;     ///< how the bound was derived
  std::string on_failure;  ///< what a failure of this test alone means (appended to the reason)
  std::string on_pass;     ///< what it means when it passes and the element-wise test fails
};

/// A sample of a problem's outputs as a smaller problem of the same op, for sampled verification
/// (docs/NUMERICS.md, "Sampled verification"): `sub` computes exactly the sampled elements of p's
/// outputs from `inputs` (gathered from p's), so its fp64 reference and bound are p's at those
/// elements. The sample is stratified: `coverage` says what it is sure to contain.
struct output_sample {
  problem sub;
  std::vector<tensor> inputs;  ///< sub's inputs, contiguous
  /// Per output: for each element of sub's output (row-major), its row-major position in p's.
  std::vector<std::vector<std::int64_t>> where;
  std::string coverage;  ///< "one element in every aligned 16x16 tile of each matrix, rows 0, m-1, ..."
};

/// A checksum test of one whole output against the inputs (op_spec::checksums): linear
/// combinations of the output compared in fp64 with the same combinations computed from the
/// inputs, under a threshold that a correct kernel exceeds with probability below the policy's
/// false-alarm rate. Cheaper than the reference by a factor of the reduction length.
struct checksum_result {
  std::size_t output = 0;
  std::string name;      ///< "checksums"
  bool passed = true;
  std::string reason;    ///< where the checks disagree (rows x columns), when not passed
  std::string method;    ///< how it was made and its threshold
  std::string guarantee; ///< what it is sure to catch, with what probability
};

/// One operator. Implementations live in src/ops/<op>/ and register with OPVAL_REGISTER_OP.
class op_spec {
 public:
  virtual ~op_spec() = default;

  virtual std::string_view name() const = 0;
  /// One line for `opval list ops`.
  virtual std::string_view summary() const = 0;
  virtual direction dir() const { return direction::forward; }
  virtual const attr_schema& schema() const = 0;
  /// Fill names this op accepts besides "default" (generic kinds plus its own).
  virtual std::vector<std::string> fills() const;
  /// Contracts (canonical `dt=` strings) the op supports, used by suites and listing.
  virtual std::vector<std::string> contracts() const = 0;
  /// The contract options its semantics read (docs/NUMERICS.md, "Contracts"): of "in_round",
  /// "acc_round", "mid", "dst_round", "denorm", and "ulp:<function>" per elementary function
  /// whose accuracy its bound takes; "deterministic" is every op's. A descriptor setting
  /// another is bad input naming these. Default: an op computing in acc, rounding to dst.
  virtual std::vector<std::string_view> contract_options() const { return {"acc_round", "denorm", "dst_round"}; }

  /// Throws opval::error, naming the attribute, when attributes, shapes or the contract are
  /// inconsistent (impossible shapes, unsupported type combinations).
  virtual void validate(const problem& p) const = 0;
  virtual std::vector<operand> inputs(const problem& p) const = 0;
  virtual std::vector<operand> outputs(const problem& p) const = 0;
  virtual op_counts counts(const problem& p) const = 0;

  /// Fills the inputs (allocated as inputs() says) deterministically from the seed; the
  /// stream of input i is i, so perturbing one input leaves the others unchanged.
  virtual fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const = 0;
  /// fp64 reference on exactly the values the kernel receives; outputs are contiguous f64.
  virtual void reference(const problem& p, std::span<const tensor> in,
                         std::span<tensor> out) const = 0;
  /// Contract-exact emulation (the `sim` backend): inputs rounded to `math` as the contract
  /// says, products and sums in `acc`, output rounded to `dst`. Outputs as outputs() says.
  virtual void simulate(const problem& p, std::span<const tensor> in,
                        std::span<tensor> out) const = 0;
  /// Error bounds per output (see error_bound).
  virtual std::vector<error_bound> bound(const problem& p, const fill_traits& f,
                                         const bound_options& o, std::span<const tensor> in,
                                         std::span<const tensor> ref) const = 0;
  /// Tests of the outputs that need the kernel's values (see posterior_check), made after the
  /// element-wise comparison under the `bound` policy against opval's own reference; none by
  /// default. `out` are the kernel's outputs, `ref` the fp64 reference.
  virtual std::vector<posterior_check> posterior(const problem& p, const fill_traits& f, const bound_options& o,
                                                 std::span<const tensor> in, std::span<const tensor> ref,
                                                 std::span<const tensor> out) const {
    return {};
  }
  /// Descriptor lines of a named suite (`smoke`, `regression`); empty if none.
  virtual std::vector<std::string> suite(std::string_view tag) const = 0;
  /// The features its generated suites cover (suite_feature, feature_table). Default: none, so
  /// its generated suite is its defaults at each contract; every registered op has a table
  /// (test_generated_suites checks it).
  virtual feature_table features() const { return {}; }
  /// The index of the input that the MISTRUSTED perturbation check re-fills (default 0).
  virtual int perturbed_input(const problem& p) const { return 0; }
  /// Known wrong mechanisms that could explain a failure of p (none by default).
  virtual std::vector<kernel_hypothesis> hypotheses(const problem& p) const { return {}; }
  /// A stratified sample of p's outputs as a smaller problem (output_sample), drawn from `seed`;
  /// nullopt where the op has none for p (then it is verified in full).
  virtual std::optional<output_sample> sample(const problem& p, std::span<const tensor> in,
                                              std::uint64_t seed) const {
    return std::nullopt;
  }
  /// Checksum tests of the whole outputs `out` (checksum_result), vectors drawn from `seed`;
  /// none where the op has none for p.
  virtual std::vector<checksum_result> checksums(const problem& p, const fill_traits& f, const bound_options& o,
                                                 std::span<const tensor> in, std::span<const tensor> out,
                                                 std::uint64_t seed) const {
    return {};
  }
};

/// Tensors for `operands` (their types, shapes and layouts), zero-filled, from `alloc`.
std::vector<tensor> allocate(const std::vector<operand>& operands, allocator& alloc = host_allocator());

/// All registered ops, by name.
const std::vector<const op_spec*>& all_ops();
/// The op named `name`; throws opval::error listing the known ops.
const op_spec& find_op(std::string_view name);

namespace detail {
struct op_registrar {
  explicit op_registrar(std::unique_ptr<op_spec> spec);
};
}  // namespace detail

/// The problems of every registered op's suite `tag` (ops filtered by `op_filter` when
/// non-empty), each with its source ("<op> suite <tag> #<n>"). Throws opval::error for an
/// unknown op or a suite line that does not parse (naming it).
std::vector<located_problem> suite_problems(const std::string& tag, const std::vector<std::string>& op_filter);

}  // namespace opval

/// Registers an op spec class (default-constructible) at load time.
#define OPVAL_REGISTER_OP(type) \
  static const ::opval::detail::op_registrar opval_op_registrar_##type{std::make_unique<type>()}
