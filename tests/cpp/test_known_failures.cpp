// The known-failures list: sections per backend, causes from comments, canonical matching,
// and one clear error naming file and line for malformed entries.
#include <gtest/gtest.h>

#include <string>

#include "opval/backend.hpp"
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

// A section that holds only on some CPUs: where the library dispatches to other kernels
// (VNNI or not, AVX-512 or not) its failures differ, and the list says where each was seen.
TEST(known_failures, a_section_with_cpu_conditions_applies_only_where_they_hold) {
  const char* text = R"([onnxruntime where !avx512_vnni !avx_vnni]
# u8 x s8 products summed in 16 bits (vpmaddubsw) saturate
matmul m=4 n=4 k=4 dt=u8xi8:i32:f32 zp_a=128
[onnxruntime where avx512f]
relu shape=7
[onnxruntime]
add shape_a=3 shape_b=3
)";
  const std::string matmul = opval::parse_problem("matmul m=4 n=4 k=4 dt=u8xi8:i32:f32 zp_a=128").to_string();
  const std::string relu = opval::parse_problem("relu shape=7").to_string();
  const known_failures avx2 = known_failures::parse(text, "f", {"avx", "avx2", "fma"});
  ASSERT_NE(avx2.cause("onnxruntime", matmul), nullptr);
  EXPECT_EQ(*avx2.cause("onnxruntime", matmul), "u8 x s8 products summed in 16 bits (vpmaddubsw) saturate");
  EXPECT_EQ(avx2.cause("onnxruntime", relu), nullptr);
  EXPECT_EQ(avx2.size(), 2u);  // the unconditional section applies everywhere
  const known_failures vnni = known_failures::parse(text, "f", {"avx2", "avx512f", "avx512_vnni"});
  EXPECT_EQ(vnni.cause("onnxruntime", matmul), nullptr);
  EXPECT_NE(vnni.cause("onnxruntime", relu), nullptr);
  EXPECT_EQ(vnni.size(), 2u);
}

TEST(known_failures, a_bad_condition_or_an_entry_of_a_section_that_does_not_apply_is_still_an_error) {
  const auto message = [](const char* text) {
    try {
      known_failures::parse(text, "list.txt", {"avx2"});
    } catch (const opval::error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // A misspelt flag would silently never hold: it is refused, naming the flags known.
  EXPECT_NE(message("[onednn where avx512bf16]\nrelu shape=4\n").find("list.txt:1: unknown CPU flag 'avx512bf16'"),
            std::string::npos);
  EXPECT_NE(message("[onednn if avx2]\n").find("got 'if' after the backend"), std::string::npos);
  EXPECT_NE(message("[onednn where]\n").find("no flag after 'where'"), std::string::npos);
  // Entries are parsed even where their section does not hold: a typo fails on every machine.
  EXPECT_NE(message("[onednn where avx512f]\nnot_an_op x=1\n").find("list.txt:2"), std::string::npos);
  // A misspelt backend would make every entry under it dead: refused, naming the backends.
  EXPECT_NE(message("[onednnn]\nrelu shape=4\n").find("list.txt:1: unknown backend 'onednnn' in a section header"),
            std::string::npos);
}

TEST(known_failures, every_backend_of_this_build_kernels_and_frameworks_may_head_a_section) {
  for (const std::string& name : opval::backend_names()) EXPECT_TRUE(opval::names_a_backend(name)) << name;
  for (const char* name : {"torch", "torch_compile", "onnxruntime", "jax", "tensorflow", "tensorflow_function",
                           "tensorflow_xla", "iree", "plugin:sgemm_tiled", "python:my_relu"})
    EXPECT_TRUE(opval::names_a_backend(name)) << name;
  EXPECT_FALSE(opval::names_a_backend("onednnn"));
}

}  // namespace
