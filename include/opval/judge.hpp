#pragma once
// Judging tensors the user already has: outputs captured from a failing model, or a kernel's
// results saved by another tool, for inputs the user has too (docs/JUDGE.md). The same fp64
// reference, bound policy, metrics, bias test and explanation as a kernel run; the checks
// that would rerun the kernel do not apply.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval {

/// An array as the user holds it: a name, the element type it is stored as, its shape and its
/// bytes (row-major, in the byte order `type` says).
struct array_data {
  std::string name;
  /// NumPy's type string ("<f4", "|i1", "|V2" for raw 2-byte records, as NumPy saves bf16) or
  /// an opval type name ("bf16", "f8_e4m3").
  std::string type;
  dims shape;
  std::vector<std::byte> bytes;
};

/// The tensors of `operands` (the problem's inputs or outputs; `role` is "input" or "output"
/// in errors), in their order, from arrays named after them. When there is one operand and
/// one array, the name need not match. Element types come from the operands (the contract):
/// an array stored as another type, of another shape, missing or naming no operand is an
/// opval::error naming the operand. A raw record type ("|V2") fits any type of its size.
std::vector<tensor> bind_arrays(const std::vector<operand>& operands, std::span<const array_data> arrays,
                                std::string_view role);

/// The verdict on `outputs` as results of problem p on `inputs` (each in the op's operand order,
/// of the operands' types and logical shapes, any strides). Uses o's policy, worst_k and
/// alternative reference; the kernel-run checks (memory guards, poisoned outputs, determinism,
/// perturbation, leaks) are named in the result's not_applicable. What a fill would have
/// promised the error model (one-signed data, special values, repeated values) is read from
/// the data. The result's backend is "judge"; `source` says where the tensors came from.
case_result judge(const problem& p, std::span<const tensor> inputs, std::span<const tensor> outputs,
                  const run_options& o = {}, const std::string& source = "");

/// judge() of the arrays in files (.npy, .npz; docs/JUDGE.md), read and bound to the
/// problem's operands by name; the result's repro is the `opval judge` command.
case_result judge_files(const problem& p, const std::vector<std::string>& input_files,
                        const std::vector<std::string>& output_files, const run_options& o = {});

/// The record of a judge_files judgement that gave no verdict of its own (the worker judging
/// it crashed or hung: state `st`, `reason`), identified as judge_files identifies its own.
case_result unfinished_judgement(const problem& p, const std::vector<std::string>& input_files,
                                 const std::vector<std::string>& output_files, const run_options& o, state st,
                                 std::string reason);

/// The arrays stored in one file: an .npy file's one array, named after the file (its stem),
/// or an .npz archive's arrays, named by their keys. Throws opval::error naming the file.
std::vector<array_data> read_array_file(const std::string& path);

}  // namespace opval
