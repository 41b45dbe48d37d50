#pragma once
// What a change touches (`opval run --changes REV|FILE`, docs/FLEET.md): the files it changes,
// from git or a list, mapped to the ops and backends they belong to, so that a run with a time
// budget runs their cases first.
#include <set>
#include <span>
#include <string>
#include <vector>

namespace opval {

/// The paths a change touches. `spec` is a file of paths, one per line (the output of `git
/// diff --name-only`, for a change made elsewhere), or a git revision: `git diff --name-only
/// REV` in the working directory (the changes since REV, uncommitted ones included). Throws
/// opval::error when it is neither.
std::vector<std::string> changed_paths(const std::string& spec);

struct touched_names {
  std::set<std::string> ops, backends;
};

/// The ops and backends among `ops` and `backends` that `paths` touch. A path touches a name
/// when one of its folders, or its file name without extension, is the name (src/ops/matmul/,
/// kernels/softmax.cu), or begins with it and '_' (softmax_avx512.cpp); a backend also when the
/// folder is the start of its name and '_' (onednn/ touches onednn_winograd); a folder
/// `common_X` touches the ops whose name contains X (common_softmax: softmax, log_softmax).
/// Shared code that names none touches nothing in particular.
touched_names touched_by(std::span<const std::string> paths, std::span<const std::string> ops,
                         std::span<const std::string> backends);

}  // namespace opval
