// The known-failures list: sections per backend, causes from comments, canonical matching,
// and one clear error naming file and line for malformed entries.
#include <gtest/gtest.h>

#include <string>

#include "opval/error.hpp"
#include "core/known_failures.hpp"
#include "opval/problem.hpp"

namespace {

using opval::known_failures;

const char* sample = R"(# oneDNN 2.6.3 disagreements
[onednn]
# relu(NaN) = 0
relu shape=257 dt=f32:f32:f32 fill=special
relu   shape=257 dt=bf16:f32:bf16 fill=special

[plugin:sgemm_tiled]
matmul m=4 n=4 k=4
)";

TEST(known_failures, lists_descriptors_per_backend_with_their_cause) {
  const known_failures k = known_failures::parse(sample, "sample");
  EXPECT_EQ(k.size(), 3u);
  const std::string relu = opval::parse_problem("relu shape=257 dt=f32:f32:f32 fill=special").to_string();
  const std::string* cause = k.cause("onednn", relu);
  ASSERT_NE(cause, nullptr);
  EXPECT_EQ(*cause, "relu(NaN) = 0");
  EXPECT_EQ(k.cause("sim", relu), nullptr);  // listed for onednn only
  // Matched in canonical form, whatever the spacing or default attributes in the file.
  EXPECT_NE(k.cause("onednn", opval::parse_problem("relu shape=257 dt=bf16:f32:bf16 fill=special").to_string()),
            nullptr);
  EXPECT_NE(k.cause("plugin:sgemm_tiled", opval::parse_problem("matmul m=4 n=4 k=4").to_string()), nullptr);
  EXPECT_EQ(k.of_backend("onednn").size(), 2u);
}

TEST(known_failures, malformed_entries_name_file_and_line) {
  try {
    known_failures::parse("[onednn]\nrelu shape=257\nnot_an_op x=1\n", "list.txt");
    FAIL() << "an unknown op was accepted";
  } catch (const opval::error& e) {
    EXPECT_NE(std::string(e.what()).find("list.txt:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(known_failures::parse("relu shape=4\n", "f"), opval::error);    // no section
  EXPECT_THROW(known_failures::parse("[onednn\nrelu shape=4\n", "f"), opval::error);  // bad section
  EXPECT_THROW(known_failures::load("/nonexistent/known.txt"), opval::error);
}

}  // namespace
