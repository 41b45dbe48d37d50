// Descriptor lines: canonical printing, round trips over every op's suites, errors that name
// the token and column, batch files with comments and includes, typed attribute access.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"

namespace {

namespace fs = std::filesystem;
using opval::parse_problem;
using opval::problem;

// The named shape sets, found from this file so the test runs from any directory.
fs::path problems_dir() { return fs::path(__FILE__).parent_path().parent_path() / "problems"; }

// The contract an op gets when dt= is not given: its first listed one.
std::string natural_dt(std::string_view op) {
  return "dt=" + opval::parse_contract_types(opval::find_op(op).contracts().front()).types_string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Parses `line` expecting a parse_error at `column` on `token` whose message mentions `part`.
void expect_parse_error(const std::string& line, const std::string& token, std::size_t column,
                        const std::string& part) {
  SCOPED_TRACE("descriptor: '" + line + "'");
  try {
    parse_problem(line);
    ADD_FAILURE() << "parsed without error";
  } catch (const opval::parse_error& e) {
    EXPECT_EQ(e.token(), token);
    EXPECT_EQ(e.column(), column);
    EXPECT_TRUE(contains(e.what(), part)) << "message: " << e.what() << "\nexpected to mention: " << part;
  }
}

// A scratch directory with files written by the test, removed afterwards.
class scratch_dir {
 public:
  scratch_dir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("opval_test_problem_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~scratch_dir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// --- round trips ----------------------------------------------------------------------------

TEST(problem, every_suite_line_round_trips) {
  ASSERT_FALSE(opval::all_ops().empty());
  std::size_t lines = 0;
  for (const opval::op_spec* spec : opval::all_ops()) {
    for (const char* tag : {"smoke", "regression"}) {
      for (const std::string& line : spec->suite(tag)) {
        SCOPED_TRACE(std::string(spec->name()) + " " + tag + ": " + line);
        problem p, q;
        ASSERT_NO_THROW(p = parse_problem(line));
        EXPECT_EQ(p.op(), spec->name());
        ASSERT_NO_THROW(q = parse_problem(p.to_string())) << p.to_string();
        EXPECT_TRUE(q == p) << p.to_string() << "\nreparsed as\n" << q.to_string();
        EXPECT_EQ(q.to_string(), p.to_string());
        // A problem carries only the contract options its op reads: its own contract implements it.
        EXPECT_TRUE(opval::contract_read_by(*spec, p.dt) == p.dt) << p.dt.to_string();
        EXPECT_TRUE(opval::implements_contract(p.dt, p));
        ++lines;
      }
    }
  }
  EXPECT_GT(lines, opval::all_ops().size());
}

// Kernel support matching (plugins, opval.check's contracts=): a declared contract implements a
// problem's when the types and every option the op reads are equal, the function accuracies
// compared for the functions the op reads only, so a preset and its expansion match.
TEST(problem, declared_contracts_match_on_the_options_the_op_reads) {
  const auto declared = [](std::string_view text) { return opval::parse_contract(text); };
  const problem preset = parse_problem("softmax shape=4x8 dt=f32 ulp=opencl");
  const problem expanded = parse_problem("softmax shape=4x8 dt=f32 ulp=exp:3,div:2.5");
  EXPECT_EQ(preset.dt.to_string(), "dt=f32:f32:f32 ulp=exp:3,div:2.5");
  for (const problem* p : {&preset, &expanded}) {
    EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=opencl"), *p));
    EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=exp:3,div:2.5"), *p));
    EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=exp:3,div:2.5,erf:7"), *p));  // erf: not softmax's
    EXPECT_FALSE(opval::implements_contract(declared("f32"), *p));              // exp 2, div 0.5
    EXPECT_FALSE(opval::implements_contract(declared("f32 ulp=exp:3"), *p));    // div 0.5
    EXPECT_FALSE(opval::implements_contract(declared("f32 ulp=exact"), *p));
    EXPECT_FALSE(opval::implements_contract(declared("bf16 ulp=opencl"), *p));  // the types too
  }
  EXPECT_EQ(opval::contract_read_by(preset.spec(), declared("f32 ulp=opencl")).to_string(),
            "dt=f32:f32:f32 ulp=exp:3,div:2.5");
  // gelu reads erf, exp, tanh and div (not rsqrt nor log), relu no function at all.
  const problem gelu = parse_problem("gelu shape=8 dt=f32 ulp=opencl");
  EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=opencl"), gelu));
  EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=exp:3,erf:16,tanh:5,div:2.5,log:9"), gelu));
  EXPECT_FALSE(opval::implements_contract(declared("f32 ulp=exp:3,erf:16,tanh:5"), gelu));
  EXPECT_FALSE(opval::implements_contract(declared("f32 ulp=opencl"), parse_problem("gelu shape=8 dt=f32")));
  const problem relu = parse_problem("relu shape=8 dt=f32");
  EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=opencl"), relu));
  EXPECT_TRUE(opval::implements_contract(declared("f32 ulp=exact"), relu));
  // Other options compare where the op reads them: relu reads denorm, not acc_round.
  EXPECT_FALSE(opval::implements_contract(declared("f32 denorm=ftz"), relu));
  EXPECT_TRUE(opval::implements_contract(declared("f32 acc_round=rz"), relu));
  EXPECT_FALSE(opval::implements_contract(declared("f32"), parse_problem("matmul m=2 n=2 k=2 dt=f32 acc_round=rz")));
}

TEST(problem, equality_sees_every_part) {
  const problem base = parse_problem("matmul m=4 n=5 k=3");
  EXPECT_TRUE(base == parse_problem("matmul k=3 n=5 m=4"));
  EXPECT_FALSE(base == parse_problem("matmul m=4 n=5 k=4"));
  EXPECT_FALSE(base == parse_problem("matmul m=4 n=5 k=3 dt=bf16"));
  EXPECT_FALSE(base == parse_problem("matmul m=4 n=5 k=3 fill=normal"));
  EXPECT_FALSE(base == parse_problem("matmul m=4 n=5 k=3 dst_round=rz"));
  EXPECT_FALSE(base == parse_problem("matmul m=4 n=5 k=3 alpha=0.5"));
}

// --- canonical printing ---------------------------------------------------------------------

TEST(problem, canonical_form_keeps_schema_order_and_omits_defaults) {
  const std::string dt = natural_dt("matmul");
  EXPECT_EQ(parse_problem("matmul k=3 n=5 m=4").to_string(), "matmul m=4 n=5 k=3 " + dt);
  // Explicit defaults are not printed, but has() remembers that they were given.
  problem p = parse_problem("matmul m=1 n=7 ta=0 act=none alpha=1");
  EXPECT_EQ(p.to_string(), "matmul n=7 " + dt);
  EXPECT_TRUE(p.has("m"));
  EXPECT_TRUE(p.has("act"));
  EXPECT_FALSE(p.has("k"));
  EXPECT_EQ(p.get_int("k"), 1);
  // dt= is printed even for a bare op name.
  EXPECT_EQ(parse_problem("matmul").to_string(), "matmul " + dt);
  // Every kind of value, printed after the shape attributes in schema order.
  EXPECT_EQ(parse_problem("matmul alpha=0.5 tb=1 batch_a=2x3 act=gelu k=9 fill=exact dt=bf16").to_string(),
            "matmul k=9 batch_a=2x3 tb=1 alpha=0.5 act=gelu dt=bf16:f32:bf16 fill=exact");
}

TEST(problem, fill_is_printed_only_when_not_default) {
  EXPECT_FALSE(contains(parse_problem("matmul m=2 fill=default").to_string(), "fill="));
  EXPECT_TRUE(contains(parse_problem("matmul m=2 fill=normal").to_string(), " fill=normal"));
  EXPECT_EQ(parse_problem("matmul m=2 fill=normal").fill, "normal");
  EXPECT_EQ(parse_problem("matmul m=2").fill, "default");
}

TEST(problem, contract_options_print_after_dt_and_survive_a_later_dt) {
  const problem p = parse_problem("layer_norm shape=2x4 denorm=ftz mid=bf16 dst_round=rz dt=bf16:f32:bf16");
  EXPECT_EQ(p.dt.denorm, opval::denormals::ftz);
  EXPECT_EQ(p.dt.mid, opval::dtype::bf16);
  EXPECT_EQ(p.dt.dst_round, opval::rounding::rz);
  EXPECT_EQ(p.dt.src, opval::dtype::bf16);
  EXPECT_EQ(p.to_string(), "layer_norm shape=2x4 dt=bf16:f32:bf16 mid=bf16 dst_round=rz denorm=ftz");
}

TEST(problem, real_values_print_exactly) {
  const problem p = parse_problem("matmul alpha=0.08838834764831845");
  EXPECT_EQ(p.get_real("alpha"), 0.08838834764831845);
  EXPECT_TRUE(parse_problem(p.to_string()) == p);
  const problem third = parse_problem("matmul alpha=0.3333333333333333");
  EXPECT_EQ(parse_problem(third.to_string()).get_real("alpha"), 0.3333333333333333);
}

// --- errors ---------------------------------------------------------------------------------

TEST(problem, unknown_op_is_reported_at_column_one) {
  expect_parse_error("matmulx m=4", "matmulx", 1, "matmulx");
  expect_parse_error("matmulx m=4", "matmulx", 1, "matmul");  // lists the known ops
}

TEST(problem, unknown_attribute_names_its_column_and_the_known_ones) {
  expect_parse_error("matmul  m=4 bogus=3", "bogus=3", 13, "unknown attribute 'bogus'");
  expect_parse_error("matmul  m=4 bogus=3", "bogus=3", 13, "known:");
  expect_parse_error("matmul  m=4 bogus=3", "bogus=3", 13, "lda");
  expect_parse_error("matmul  m=4 bogus=3", "bogus=3", 13, "dst_round");
}

TEST(problem, malformed_tokens) {
  expect_parse_error("matmul m4", "m4", 8, "key=value");
  expect_parse_error("matmul m=4 =4", "=4", 12, "key=value");
  expect_parse_error("\tmatmul m=4 k", "k", 13, "key=value");
}

TEST(problem, duplicate_keys) {
  expect_parse_error("matmul m=4 m=5", "m=5", 12, "'m' is given twice");
  expect_parse_error("matmul dt=f32 dt=bf16", "dt=bf16", 15, "'dt' is given twice");
  expect_parse_error("matmul fill=normal m=2 fill=exact", "fill=exact", 24, "'fill' is given twice");
}

TEST(problem, bad_values_name_the_attribute) {
  expect_parse_error("matmul m=abc", "m=abc", 8, "attribute 'm' expects an integer");
  expect_parse_error("matmul m=4.5", "m=4.5", 8, "expects an integer");
  expect_parse_error("matmul m=", "m=", 8, "expects an integer");
  expect_parse_error("matmul n=2 m=-1", "m=-1", 12, "out of range");  // m=0 is an empty matrix
  expect_parse_error("matmul n=2 lda=-1", "lda=-1", 12, "attribute 'lda'");
  expect_parse_error("matmul ta=2", "ta=2", 8, "attribute 'ta'");
  expect_parse_error("matmul act=tanh", "act=tanh", 8, "gelu");  // lists the choices
  expect_parse_error("matmul batch_a=2xq", "batch_a=2xq", 8, "attribute 'batch_a'");
  expect_parse_error("matmul alpha=x1", "alpha=x1", 8, "attribute 'alpha'");
}

TEST(problem, bad_contracts_and_fills) {
  expect_parse_error("matmul m=2 dt=f33", "dt=f33", 12, "f33");
  expect_parse_error("matmul m=2 dt=f32:f32", "dt=f32:f32", 12, "src[xwei][@math]:acc:dst");
  expect_parse_error("matmul m=2 dst_round=up", "dst_round=up", 12, "rne or rz");
  expect_parse_error("matmul m=2 fill=bogus", "fill=bogus", 12, "unknown fill 'bogus'");
  expect_parse_error("matmul m=2 fill=bogus", "fill=bogus", 12, "normal");  // lists known fills
}

TEST(problem, impossible_problems_fail_validation) {
  // lda smaller than the stored row length k.
  expect_parse_error("matmul m=4 n=4 k=8 lda=2", "matmul m=4 n=4 k=8 lda=2", 1, "lda");
  // A contract matmul does not implement.
  expect_parse_error("matmul dt=f16:f64:f64", "matmul dt=f16:f64:f64", 1, "does not support");
}

TEST(problem, empty_descriptor) {
  for (const char* line : {"", "   ", "\t \t"}) {
    expect_parse_error(line, "", 1, "empty");
  }
}

// --- batch files ----------------------------------------------------------------------------

TEST(problem_file, comments_blank_lines_and_includes) {
  scratch_dir dir;
  dir.write("sub/leaf.txt", "matmul m=3 n=3 k=3  # from the leaf\n");
  // Includes resolve relative to the including file, not the working directory.
  dir.write("sub/middle.txt", "include leaf\nmatmul m=2 n=2 k=2\n");
  const std::string main = dir.write("main.txt",
                                     "# a batch\n"
                                     "\n"
                                     "matmul m=4 n=5 k=3   # trailing comment\n"
                                     "   \t\n"
                                     "include sub/middle.txt\n"
                                     "  matmul m=1 n=1 k=7 dt=bf16 fill=normal\n"
                                     "#matmul m=9\n");
  const auto got = opval::read_problem_file(main);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(got[0].prob == parse_problem("matmul m=4 n=5 k=3"));
  EXPECT_EQ(got[0].source, main + ":3");
  EXPECT_TRUE(got[1].prob == parse_problem("matmul m=3 n=3 k=3"));
  EXPECT_EQ(got[1].source, (dir.path() / "sub" / "leaf.txt").string() + ":1");
  EXPECT_TRUE(got[2].prob == parse_problem("matmul m=2 n=2 k=2"));
  EXPECT_EQ(got[2].source, (dir.path() / "sub" / "middle.txt").string() + ":2");
  EXPECT_TRUE(got[3].prob == parse_problem("matmul m=1 n=1 k=7 dt=bf16 fill=normal"));
  EXPECT_EQ(got[3].source, main + ":6");
}

TEST(problem_file, parse_errors_name_file_line_and_column) {
  scratch_dir dir;
  const std::string path = dir.write("bad.txt", "matmul m=2\n# fine\nmatmul m=4 bogus=1\n");
  try {
    opval::read_problem_file(path);
    ADD_FAILURE() << "read without error";
  } catch (const opval::parse_error& e) {
    EXPECT_TRUE(contains(e.what(), path + ":3:12:")) << e.what();
    EXPECT_EQ(e.token(), "bogus=1");
    EXPECT_EQ(e.column(), 12u);
  }
}

TEST(problem_file, columns_count_from_the_start_of_an_indented_line) {
  scratch_dir dir;
  const std::string path = dir.write("indented.txt", "   matmul bogus=1\n");
  try {
    opval::read_problem_file(path);
    ADD_FAILURE() << "read without error";
  } catch (const opval::parse_error& e) {
    EXPECT_EQ(e.column(), 11u);
    EXPECT_TRUE(contains(e.what(), path + ":1:11:")) << e.what();
    EXPECT_FALSE(contains(e.what(), "column 8")) << e.what();  // no stale column in the message
  }
}

TEST(problem_file, errors_in_included_files_name_that_file) {
  scratch_dir dir;
  const std::string inner = dir.write("inner.txt", "\nmatmul m=abc\n");
  const std::string outer = dir.write("outer.txt", "matmul m=2\ninclude inner\n");
  try {
    opval::read_problem_file(outer);
    ADD_FAILURE() << "read without error";
  } catch (const opval::parse_error& e) {
    EXPECT_TRUE(contains(e.what(), inner + ":2:8:")) << e.what();
  }
}

TEST(problem_file, missing_files_and_include_cycles_are_errors) {
  scratch_dir dir;
  EXPECT_THROW(opval::read_problem_file((dir.path() / "absent.txt").string()), opval::error);
  const std::string dangling = dir.write("dangling.txt", "matmul m=2\ninclude no_such_set\n");
  try {
    opval::read_problem_file(dangling);
    ADD_FAILURE() << "read without error";
  } catch (const opval::error& e) {
    EXPECT_TRUE(contains(e.what(), "no_such_set")) << e.what();
    EXPECT_TRUE(contains(e.what(), dangling + ":2")) << e.what();  // where the include is
  }
  const std::string loop = dir.write("loop.txt", "include loop\n");
  EXPECT_THROW(opval::read_problem_file(loop), opval::error);
}

TEST(problem_file, named_shape_sets_resolve_by_name) {
  std::size_t sets = 0;
  for (const auto& entry : fs::directory_iterator(problems_dir())) {
    if (!entry.is_regular_file() || entry.path().extension() != ".txt") continue;
    const std::string stem = entry.path().stem().string();
    SCOPED_TRACE(stem);
    std::vector<opval::located_problem> by_name, by_file;
    ASSERT_NO_THROW(by_name = opval::read_problem_file(stem));
    EXPECT_GT(by_name.size(), 0u);
    ASSERT_NO_THROW(by_file = opval::read_problem_file(entry.path().string()));
    ASSERT_EQ(by_name.size(), by_file.size());
    for (std::size_t i = 0; i < by_name.size(); ++i) EXPECT_TRUE(by_name[i].prob == by_file[i].prob);
    ++sets;
  }
  EXPECT_GT(sets, 0u);
}

TEST(problem_file, a_batch_file_can_include_a_named_shape_set) {
  scratch_dir dir;
  const std::string path = dir.write("uses_set.txt", "include llama_matmul\nmatmul m=2\n");
  const auto got = opval::read_problem_file(path);
  const auto set = opval::read_problem_file((problems_dir() / "llama_matmul.txt").string());
  ASSERT_EQ(got.size(), set.size() + 1);
  EXPECT_TRUE(got.back().prob == parse_problem("matmul m=2"));
}

// --- typed access ---------------------------------------------------------------------------

TEST(problem, typed_getters_return_values_and_defaults) {
  const problem p = parse_problem("matmul m=6 alpha=0.25 ta=1 act=relu batch_a=2x1");
  EXPECT_EQ(p.get_int("m"), 6);
  EXPECT_EQ(p.get_int("n"), 1);  // the schema default
  EXPECT_EQ(p.get_real("alpha"), 0.25);
  EXPECT_TRUE(p.get_bool("ta"));
  EXPECT_FALSE(p.get_bool("tb"));
  EXPECT_EQ(p.get_choice("act"), "relu");
  EXPECT_EQ(p.get_dims("batch_a"), (opval::dims{2, 1}));
  EXPECT_EQ(p.get_dims("batch_b"), opval::dims{});
}

TEST(problem, typed_getters_throw_on_the_wrong_kind_or_name) {
  const problem p = parse_problem("matmul m=6");
  EXPECT_THROW(p.get_real("m"), opval::error);
  EXPECT_THROW(p.get_bool("m"), opval::error);
  EXPECT_THROW(p.get_choice("m"), opval::error);
  EXPECT_THROW(p.get_dims("m"), opval::error);
  EXPECT_THROW(p.get_int("alpha"), opval::error);
  EXPECT_THROW(p.get_int("ta"), opval::error);
  EXPECT_THROW(p.get_int("act"), opval::error);
  EXPECT_THROW(p.get_int("batch_a"), opval::error);
  EXPECT_THROW(p.get_int("nope"), opval::error);
}

TEST(problem, set_checks_name_and_kind) {
  problem p(opval::find_op("matmul"));
  p.set("m", std::int64_t{7});
  p.set("act", std::string("silu"));
  p.set("batch_b", opval::dims{3});
  EXPECT_EQ(p.get_int("m"), 7);
  EXPECT_EQ(p.get_choice("act"), "silu");
  EXPECT_TRUE(p.has("m"));
  EXPECT_THROW(p.set("nope", std::int64_t{1}), opval::error);
  EXPECT_THROW(p.set("m", 1.5), opval::error);
  EXPECT_THROW(p.set("m", true), opval::error);
  EXPECT_THROW(p.set("alpha", std::int64_t{1}), opval::error);
  EXPECT_THROW(p.set("act", opval::dims{1}), opval::error);
  EXPECT_EQ(p.get_int("m"), 7);  // a rejected set changes nothing
  // A problem built through the API prints like a parsed one.
  p.dt = opval::parse_contract_types("bf16");
  EXPECT_TRUE(parse_problem(p.to_string()) == p);
  EXPECT_EQ(p.to_string(), "matmul m=7 batch_b=3 act=silu dt=bf16:f32:bf16");
}

}  // namespace
