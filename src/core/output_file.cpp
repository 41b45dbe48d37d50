// Output files that lose nothing (core/output_file.hpp).
#include "core/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {
bool names_same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) return std::filesystem::equivalent(a, b, ec);
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

output_file::output_file(const std::string& path, bool append, std::string_view what,
                         std::span<const std::string> inputs)
    : path_(path), what_(what) {
  if (path.empty()) throw error(fmt::format("an empty {} path: give a file name", what));
  for (const std::string& input : inputs)
    if (names_same_file(path, input))
      throw error(fmt::format("{} file '{}' is also an input of this run ('{}'): writing it would overwrite what the "
                              "run reads",
                              what, path, input));
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  out_.open(p, append ? std::ios::app : std::ios::trunc);
  if (!out_) throw error(fmt::format("cannot write {} file '{}'", what, path));
}

void output_file::record_written() {
  ++records_;
  if (out_.good()) {
    ++written_;
    return;
  }
  if (reason_.empty()) reason_ = errno != 0 ? std::strerror(errno) : "the write failed";
  failure_ = fmt::format("writing {} file '{}' failed ({}): {} of {} records reached it", what_, path_, reason_, written_,
                         records_);
}

void output_file::check_reached() const {
  if (!failure_.empty()) throw error(failure_);
}

std::vector<std::string> input_files(std::span<const located_problem> problems, std::vector<std::string> others) {
  std::vector<std::string> out = std::move(others);
  for (const located_problem& lp : problems) {
    const std::size_t colon = lp.source.rfind(':');
    if (lp.source.starts_with('<') || colon == std::string::npos) continue;  // "<command line>"
    std::string file = lp.source.substr(0, colon);
    if (out.empty() || out.back() != file) out.push_back(std::move(file));
  }
  return out;
}

}  // namespace opval
