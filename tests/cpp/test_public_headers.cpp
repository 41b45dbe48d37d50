// include/opval/ holds the public API only (docs/ARCHITECTURE.md): what a plugin author or an
// embedder needs (graph.hpp: models as graphs, for graph validation), at most 17 headers, each including only public headers (tests/cpp/
// CMakeLists.txt also compiles each on its own without src/ on the include path).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(public_headers, at_most_seventeen_each_including_only_public_headers) {
  const fs::path dir = fs::path(OPVAL_SOURCE_DIR) / "include/opval";
  int count = 0;
  const std::regex include(R"(#include\s+\"([^\"]+)\")");
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++count;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1];
      const bool public_header = target.starts_with("opval/") &&
                                 (fs::exists(dir / target.substr(6)) || target == "opval/build_info.hpp");
      EXPECT_TRUE(public_header) << entry.path().filename() << " includes " << target << ", which is not public";
    }
  }
  EXPECT_LE(count, 17) << "include/opval/ is for the public API only";
}

}  // namespace
