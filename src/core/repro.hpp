#pragma once
// The commands that reproduce a case, as opval prints and records them: `opval repro` for a
// kernel run, `opval judge` for judged files. Every descriptor and path in them is quoted
// for a POSIX shell (shell_quote.hpp).
#include <string>
#include <vector>

#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::detail {

/// `opval repro DESCRIPTOR --seed S --backend B --policy P [--reference R]`.
std::string case_repro(const problem& p, const run_options& o, const std::string& backend_name);

/// `opval judge DESCRIPTOR --inputs F... --outputs F... --policy P [--worst N] [--reference R]`.
std::string judge_repro(const problem& p, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const run_options& o);

}  // namespace opval::detail
