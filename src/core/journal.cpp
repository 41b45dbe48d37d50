// Reading back a journal (core/journal.hpp).
#include "core/journal.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "opval/error.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

// What a record and the case it answers share (the options are not in a record: a resumed run
// is given the same ones, docs/CLI.md).
std::string case_key(const case_identity& id) {
  return id.descriptor + '\n' + id.backend + '\n' + std::to_string(id.seed) + '\n' + id.source;
}

}  // namespace

journal_contents read_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cannot read journal '" + path + "'");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  journal_contents j;
  // rfind returns npos (+1 = 0) when no line is complete: everything is unfinished.
  if (const std::size_t end = text.rfind('\n') + 1; end != text.size()) {
    text.resize(end);
    j.unfinished = true;
  }
  j.complete_bytes = text.size();
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    // A generated suite's coverage, a budget's selection: lines about the run, no case.
    if (line.starts_with(R"({"coverage":)") || line.starts_with(R"({"selection":)")) {
      j.coverage.emplace_back(line);
      continue;
    }
    try {
      j.records.push_back(from_json_line(line));
    } catch (const std::exception& e) {
      throw error("journal '" + path + "' line " + std::to_string(line_no) + ": " + e.what());
    }
  }
  return j;
}

std::vector<case_result> recover_journal(const std::string& path) {
  journal_contents j = read_journal(path);
  if (j.unfinished) {
    std::error_code ec;
    std::filesystem::resize_file(path, j.complete_bytes, ec);
    if (ec) throw error("cannot cut the unfinished last line off journal '" + path + "': " + ec.message());
  }
  return std::move(j.records);
}

journal_index::journal_index(std::vector<case_result> records) : left_(records.size()) {
  for (case_result& r : records)
    by_case_[case_key(r)].push_back(std::move(r));
}

std::optional<case_result> journal_index::take(const case_identity& id) {
  auto it = by_case_.find(case_key(id));
  if (it == by_case_.end() || it->second.empty()) return std::nullopt;
  case_result r = std::move(it->second.front());
  it->second.pop_front();
  --left_;
  return r;
}

}  // namespace opval
