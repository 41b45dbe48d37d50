#pragma once
// One test problem: an op, its attributes, a contract and a fill. Parses from and prints to
// a single line: `matmul m=64 n=48 k=33 ta=1 alpha=0.5 dt=bf16:f32:bf16 fill=normal`.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "opval/attr.hpp"
#include "opval/contract.hpp"

namespace opval {

class op_spec;

/// An op plus everything that makes one case of it (but not the seed).
class problem {
 public:
  problem() = default;
  explicit problem(const op_spec& spec);

  const op_spec& spec() const { return *spec_; }
  std::string_view op() const;

  /// Typed attribute access; falls back to the schema default. Throws on a kind mismatch.
  std::int64_t get_int(std::string_view name) const;
  double get_real(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  const std::string& get_choice(std::string_view name) const;
  const opval::dims& get_dims(std::string_view name) const;
  /// The value of attribute `name`, its default when the problem does not set it; throws
  /// opval::error when the op has no such attribute.
  const attr_value& value(std::string_view name) const;
  /// True when the problem sets `name` explicitly (even to its default).
  bool has(std::string_view name) const;
  /// Sets an attribute (validated against the schema); throws opval::error.
  void set(std::string_view name, attr_value v);

  contract dt;                   ///< the numeric contract
  std::string fill = "default";  ///< the fill name (op-specific meaning of "default")

  /// The canonical one-line form; parse_problem(to_string()) yields an equal problem.
  std::string to_string() const;
  bool operator==(const problem& other) const;

 private:
  const op_spec* spec_ = nullptr;
  std::map<std::string, attr_value, std::less<>> attrs_;
};

/// Parses one descriptor line. Throws parse_error naming the token and its column.
problem parse_problem(std::string_view line);

/// `c` as a problem of `op` carries it: each contract option the op does not read
/// (op_spec::contract_options) at its default, the accuracy (ulp=) of each elementary function
/// included, so a preset keeps only the op's share of it (softmax: ulp=opencl is ulp=exp:3,div:2.5).
contract contract_read_by(const op_spec& op, contract c);

/// Whether a kernel that declares the contract `declared` implements p's: the types equal and
/// each option the op reads equal (contract_read_by), so `f32 ulp=opencl` implements `softmax
/// dt=f32 ulp=exp:3,div:2.5` and `relu dt=f32`, not `softmax dt=f32` (exp 2 ulps). What
/// opval.check's `contracts=` matches with (Problem.implemented_by).
bool implements_contract(const contract& declared, const problem& p);

/// A problem read from a batch file, with where it came from.
struct located_problem {
  problem prob;
  std::string source;  ///< "file:line" or "<command line>"
};

/// Reads a batch file: one descriptor per line; `#` starts a comment; blank lines ignored;
/// `include NAME` reads a named shape set (shape_set_dirs). Throws naming file:line:column.
std::vector<located_problem> read_problem_file(const std::string& path);

/// The folders named shape sets (`resnet50_conv`, ...) are read from, in order: those of
/// $OPVAL_PROBLEMS_PATH (colon-separated), then `problems/` beside libopval and
/// `share/opval/problems/` of its prefix, where the build and the installs put them (no
/// source-tree path is baked into the library).
std::vector<std::filesystem::path> shape_set_dirs();

}  // namespace opval
