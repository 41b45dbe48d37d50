// Every registered op has the same folder (src/ops/<op>/: <op>.hpp, spec.cpp, reference.cpp,
// bound.cpp, suite.cpp) and a page docs/ops/<op>.md that is true to the registry: its
// attribute table lists exactly the schema's attributes, it names every contract, fill and
// suite the op has (docs/ops/README.md). A new op without its page, or a page that forgot an
// attribute added later, fails here naming what is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "opval/op_spec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace opval;

const fs::path source_dir = OPVAL_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A page: its title (the first line) and its `## ` sections by name, in order.
struct page {
  std::string title;
  std::vector<std::string> order;
  std::map<std::string, std::string> sections;
};

/// The text of section `name` of `pg`; empty when the page lacks it.
std::string section(const page& pg, const std::string& name) {
  const auto it = pg.sections.find(name);
  return it == pg.sections.end() ? std::string() : it->second;
}

page parse_page(const std::string& text) {
  page pg;
  std::istringstream in(text);
  std::string line, current;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      pg.title = line;
      first = false;
    } else if (line.rfind("## ", 0) == 0) {
      current = line.substr(3);
      pg.order.push_back(current);
      pg.sections[current];
    } else if (!current.empty()) {
      pg.sections[current] += line + "\n";
    }
  }
  return pg;
}

/// The backticked first cell of each row of the first table in `section` (header and rule
/// excluded): the attribute names the page documents.
std::vector<std::string> table_names(const std::string& section) {
  std::vector<std::string> names;
  std::istringstream in(section);
  std::string line;
  int row = 0;
  static const std::regex first_cell(R"(^\|\s*`([^`]+)`)");
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (row > 0) break;  // the table ended
      continue;
    }
    if (row++ < 2) continue;  // header and |---|
    std::smatch m;
    if (std::regex_search(line, m, first_cell)) names.push_back(m[1]);
  }
  return names;
}

bool names(const std::string& text, const std::string& quoted) { return text.find(quoted) != std::string::npos; }

bool has_nonblank(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
}

const std::vector<std::string> required_sections{"Computes", "Attributes", "Contracts", "Error model", "Fills", "Suites"};
const std::vector<std::string> suite_tags{"smoke", "regression"};

TEST(OpFolders, EveryOpHasTheSameFileSet) {
  for (const op_spec* op : all_ops()) {
    const std::string name(op->name());
    const fs::path dir = source_dir / "src" / "ops" / name;
    for (const std::string file : {name + ".hpp", std::string("spec.cpp"), std::string("reference.cpp"),
                                   std::string("bound.cpp"), std::string("suite.cpp")})
      EXPECT_TRUE(fs::is_regular_file(dir / file)) << "src/ops/" << name << "/" << file << " is missing";
  }
}

TEST(OpFolders, EveryFolderIsAnOpOrAFamily) {
  std::set<std::string> ops;
  for (const op_spec* op : all_ops()) ops.insert(std::string(op->name()));
  for (const auto& entry : fs::directory_iterator(source_dir / "src" / "ops")) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename().string();
    EXPECT_TRUE(ops.count(folder) || folder.rfind("common_", 0) == 0)
        << "src/ops/" << folder << " is neither a registered op nor a common_<family> folder";
  }
}

TEST(OpFolders, EveryOpHasAPageTrueToTheRegistry) {
  for (const op_spec* op : all_ops()) {
    const std::string name(op->name());
    const fs::path path = source_dir / "docs" / "ops" / (name + ".md");
    ASSERT_TRUE(fs::is_regular_file(path))
        << "docs/ops/" << name << ".md is missing (docs/ops/README.md says what it holds)";
    const page pg = parse_page(read_text(path));
    const std::string where = "docs/ops/" + name + ".md";
    EXPECT_EQ(pg.title, "# " + name) << where;
    EXPECT_EQ(pg.order, required_sections) << where << ": the sections, in order";
    for (const auto& s : {"Computes", "Error model"}) EXPECT_TRUE(has_nonblank(section(pg, s))) << where << ": " << s;

    std::vector<std::string> schema;
    for (const attr_def& d : op->schema().defs()) schema.push_back(d.name);
    std::vector<std::string> documented = table_names(section(pg, "Attributes"));
    std::sort(schema.begin(), schema.end());
    std::sort(documented.begin(), documented.end());
    EXPECT_EQ(documented, schema) << where << ": the attribute table must list exactly the schema's attributes";

    const std::string contracts = section(pg, "Contracts");
    for (const auto& c : op->contracts())
      EXPECT_TRUE(names(contracts, "`dt=" + c + "`")) << where << ": contract `dt=" << c << "` not in Contracts";
    const std::string fills = section(pg, "Fills");
    for (const auto& f : op->fills())
      EXPECT_TRUE(names(fills, "`" + f + "`")) << where << ": fill `" << f << "` not in Fills";
    const std::string suites = section(pg, "Suites");
    for (const auto& tag : suite_tags)
      if (!op->suite(tag).empty()) EXPECT_TRUE(names(suites, "`" + tag + "`")) << where << ": suite `" << tag << "`";
  }
}

TEST(OpFolders, EveryPageIsAnOp) {
  for (const auto& entry : fs::directory_iterator(source_dir / "docs" / "ops")) {
    const std::string file = entry.path().filename().string();
    if (file == "README.md" || entry.path().extension() != ".md") continue;
    const std::string op = entry.path().stem().string();
    EXPECT_NO_THROW((void)find_op(op)) << "docs/ops/" << file << " documents no registered op";
  }
}

// The checks can fail: a page missing an attribute row, a fill and a section is caught.
TEST(OpFolders, APageMissingAnAttributeIsCaught) {
  const page pg = parse_page(
      "# demo\nsummary\n## Computes\ny = x\n## Attributes\n| attribute | kind |\n| --- | --- |\n| `shape` | dims |\n"
      "\ntext after the table naming `ld`\n## Fills\n`default`\n");
  EXPECT_EQ(table_names(pg.sections.at("Attributes")), std::vector<std::string>{"shape"});
  EXPECT_NE(pg.order, required_sections);
  EXPECT_FALSE(names(pg.sections.at("Fills"), "`special`"));
}

}  // namespace
