// judge(): a verdict on tensors the user already has. Correct results pass (a correctly
// rounded cast, sim's matmul); planted bugs fail with the explanation a kernel run gives (a
// truncating cast and half-away ties on the bias test, one ULP on one matmul element named
// by its index, an all-zero output MISTRUSTED); what a fill would have promised is read from
// the data; arrays bind to operands by name, type and shape, with one clear error otherwise;
// .npy and .npz files (versions, Fortran order, byte order, corrupt files) and the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <onnx/onnx_pb.h>

#include "core/backend_run.hpp"
#include "cli_testing.hpp"
#include "opval/error.hpp"
#include "opval/judge.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

std::vector<double> normal_values(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(d(gen));
  return v;
}

tensor with_values(dtype t, const dims& shape, const std::vector<double>& v, rounding r = rounding::rne) {
  tensor out(t, shape);
  out.assign(v, r);
  return out;
}

case_result judge_cast(const std::vector<double>& x, const std::vector<double>& y, rounding r = rounding::rne) {
  const problem p = parse_problem("cast shape=" + std::to_string(x.size()) + " dt=f32:f32:bf16");
  const dims shape{static_cast<std::int64_t>(x.size())};
  const tensor in = with_values(dtype::f32, shape, x);
  const tensor out = with_values(dtype::bf16, shape, y, r);
  return judge(p, std::span(&in, 1), std::span(&out, 1));
}

TEST(Judge, ACorrectlyRoundedCastPasses) {
  const std::vector<double> x = normal_values(20011, 1);
  const case_result r = judge_cast(x, x);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_EQ(r.backend, "judge");
  EXPECT_NE(r.not_applicable.find("poisoned outputs"), std::string::npos);
  EXPECT_NE(r.repro.find("save them"), std::string::npos) << r.repro;  // no command replays tensors in memory
  EXPECT_FALSE(r.v.outputs.at(0).m.bias.biased) << r.v.outputs.at(0).m.bias.note;
}

TEST(Judge, ATruncatingCastFailsWithItsBiasNamed) {
  const std::vector<double> x = normal_values(20011, 2);
  const case_result r = judge_cast(x, x, rounding::rz);
  ASSERT_EQ(r.v.st, state::failed);
  const metrics& m = r.v.outputs.at(0).m;
  EXPECT_LE(m.max_ulps, 1.0);
  EXPECT_TRUE(m.bias.biased) << m.bias.note;
  EXPECT_LT(m.bias.sign_relative_mean, -0.3) << m.bias.note;
}

TEST(Judge, TiesRoundedHalfAwayFailOnlyOnTheBiasTest) {
  // f32 values halfway between two bf16 values: round-to-nearest-even goes to the even one,
  // std::round-style rounding always away from zero; each within the 0.5-ULP bound.
  std::vector<double> x = normal_values(20011, 3), away(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double b = round_to(dtype::bf16, x[i], rounding::rz);
    x[i] = b + std::copysign(ulp(dtype::bf16, b) / 2, b);
    away[i] = b + std::copysign(ulp(dtype::bf16, b), b);
  }
  EXPECT_EQ(judge_cast(x, x).v.st, state::passed);
  const case_result r = judge_cast(x, away);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.v.outputs.at(0).m.beyond_bound, 0);
  EXPECT_NE(r.v.reason.find("systematic rounding bias"), std::string::npos) << r.v.reason;
}

// sim's results of a matmul (correct at its contract) on inputs the op fills.
struct matmul_case {
  problem p = parse_problem("matmul m=24 n=40 k=33 dt=bf16:f32:bf16");
  std::vector<tensor> ins, outs;
  matmul_case() {
    ins = allocate(p.spec().inputs(p));
    outs = allocate(p.spec().outputs(p));
    p.spec().fill(p, 7, ins);
    run_backend(*make_sim_backend(), p, ins, outs);
  }
};

TEST(Judge, SimsMatmulPassesAndOneUlpOnOneElementFailsNamingIt) {
  matmul_case c;
  EXPECT_EQ(judge(c.p, c.ins, c.outs).v.st, state::passed);
  std::vector<tensor> refs;
  for (const operand& o : c.p.spec().outputs(c.p)) refs.emplace_back(dtype::f64, o.shape);
  c.p.spec().reference(c.p, c.ins, refs);
  const dims at{5, 17};
  const double got = c.outs[0].get(at), exact = refs[0].get(at);
  const double away = got >= exact ? got + ulp(dtype::bf16, got) : got - ulp(dtype::bf16, -got);
  c.outs[0].set(at, away);
  const case_result r = judge(c.p, c.ins, c.outs);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.v.outputs.at(0).m.beyond_bound, 1);
  EXPECT_NE(r.v.reason.find("worst at [5,17]"), std::string::npos) << r.v.reason;
}

TEST(Judge, AnAllZeroOutputIsMistrusted) {
  matmul_case c;
  c.outs[0] = allocate(c.p.spec().outputs(c.p))[0];
  const case_result r = judge(c.p, c.ins, c.outs);
  EXPECT_EQ(r.v.st, state::mistrusted) << r.v.reason;
  EXPECT_NE(r.v.reason.find("all zeros"), std::string::npos) << r.v.reason;
}

TEST(Judge, OneSignedDataGetsTheDeterministicBound) {
  // A fill's promise (fill=positive: no cancellation) read from the data instead.
  const problem p = parse_problem("reduce shape=64x512 axes=1 dt=f32");
  std::vector<tensor> ins = allocate(p.spec().inputs(p)), outs = allocate(p.spec().outputs(p));
  auto bound_of = [&] {
    run_backend(*make_sim_backend(), p, ins, outs);
    return judge(p, ins, outs).v.outputs.at(0).bound;
  };
  p.spec().fill(p, 3, ins);
  EXPECT_EQ(bound_of().find("same-sign"), std::string::npos);
  std::vector<double> v = ins[0].to_vector();
  for (double& x : v) x = std::fabs(x);
  ins[0].assign(v);
  EXPECT_NE(bound_of().find("same-sign"), std::string::npos);
}

TEST(Judge, TensorsOfAnotherTypeOrShapeAreBadInput) {
  matmul_case c;
  std::vector<tensor> wrong = c.outs;
  wrong[0] = tensor(dtype::f32, c.outs[0].shape());
  EXPECT_THROW(judge(c.p, c.ins, wrong), error);
  wrong[0] = tensor(dtype::bf16, {40, 24});
  EXPECT_THROW(judge(c.p, c.ins, wrong), error);
  EXPECT_THROW(judge(c.p, std::span(c.ins).first(1), c.outs), error);
}

// ---------------------------------------------------------------- arrays and files

array_data raw_array(std::string name, std::string type, dims shape, std::size_t element_size) {
  return {std::move(name), std::move(type), shape,
          std::vector<std::byte>(static_cast<std::size_t>(element_count(shape)) * element_size)};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JudgeArrays, BindByNameTypeAndShapeWithOneClearError) {
  const problem p = parse_problem("matmul m=4 n=3 k=2 dt=bf16:f32:bf16");
  const std::vector<operand> ins = p.spec().inputs(p);
  const std::vector<array_data> good{raw_array("B", "|V2", {2, 3}, 2), raw_array("A", "bf16", {4, 2}, 2)};
  const std::vector<tensor> bound = bind_arrays(ins, good, "input");
  ASSERT_EQ(bound.size(), 2u);
  EXPECT_EQ(bound[0].shape(), (dims{4, 2}));
  EXPECT_EQ(bound[0].type(), dtype::bf16);

  EXPECT_EQ(error_of([&] { bind_arrays(ins, std::vector{good[0]}, "input"); }),
            "no array for input 'A' (the problem's inputs: A, B)");
  std::vector<array_data> extra = good;
  extra.push_back(raw_array("C", "|V2", {4, 3}, 2));
  EXPECT_EQ(error_of([&] { bind_arrays(ins, extra, "input"); }),
            "array 'C' names no input of the problem (its inputs: A, B)");
  std::vector<array_data> as_f32 = good;
  as_f32[1] = raw_array("A", "<f4", {4, 2}, 4);
  EXPECT_EQ(error_of([&] { bind_arrays(ins, as_f32, "input"); }),
            "input 'A': the array is stored as '<f4', the contract's type for it is bf16 (or its raw bits: NumPy "
            "saves ml_dtypes' bf16 arrays as '<V2' records)");
  std::vector<array_data> twice = good;
  twice.push_back(good[0]);
  EXPECT_EQ(error_of([&] { bind_arrays(ins, twice, "input"); }), "array 'B' is given twice for the problem's inputs");
  // ml_dtypes' float8_e5m2 is a NumPy float kind: np.save writes '<f1'.
  EXPECT_EQ(bind_arrays({{"y", dtype::f8_e5m2, {3}, {}}}, std::vector{raw_array("y", "<f1", {3}, 1)}, "output")[0].type(),
            dtype::f8_e5m2);
  EXPECT_THROW(bind_arrays({{"y", dtype::f8_e4m3, {3}, {}}}, std::vector{raw_array("y", "<f1", {3}, 1)}, "output"), error);
  EXPECT_THROW(bind_arrays({{"y", dtype::f32, {3}, {}}}, std::vector{raw_array("y", "<f4junk", {3}, 4)}, "output"), error);
  std::vector<array_data> reshaped = good;
  reshaped[1] = raw_array("A", "|V2", {2, 4}, 2);
  EXPECT_EQ(error_of([&] { bind_arrays(ins, reshaped, "input"); }),
            "input 'A': the array's shape is [2,4], the problem's is [4,2]");
  std::vector<array_data> short_data = good;
  short_data[1].bytes.pop_back();
  EXPECT_NE(error_of([&] { bind_arrays(ins, short_data, "input"); }).find("15 bytes of data for 8 elements"),
            std::string::npos);
}

// An .npy image: format `version`, type `descr`, the given shape text and data bytes.
std::string npy_image(const std::string& descr, const std::string& shape, const std::string& data, int version = 1,
                      bool fortran = false) {
  const std::string descr_text = descr.starts_with('[') ? descr : "'" + descr + "'";  // a record list as it is
  std::string header = "{'descr': " + descr_text + ", 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  const std::size_t prefix = version == 1 ? 10 : 12;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

class JudgeFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("opval_judge_" + std::to_string(::getpid()) + "_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  }
};

TEST_F(JudgeFiles, NpyVersionsFortranOrderAndByteOrder) {
  const std::vector<array_data> v1 = read_array_file(write("x.npy", npy_image("<f4", "(2, 3)", bytes_of<float>({1, 2, 3, 4, 5, 6}))));
  ASSERT_EQ(v1.size(), 1u);
  EXPECT_EQ(v1[0].name, "x");
  EXPECT_EQ(v1[0].shape, (dims{2, 3}));
  EXPECT_EQ(v1[0].type, "<f4");
  // Column-major storage of [[1,2,3],[4,5,6]] reads back row-major.
  const std::vector<array_data> f = read_array_file(
      write("f.npy", npy_image("<f4", "(2, 3)", bytes_of<float>({1, 4, 2, 5, 3, 6}), 2, true)));
  EXPECT_EQ(f[0].bytes, v1[0].bytes);
  const std::vector<array_data> scalar = read_array_file(write("s.npy", npy_image("<f8", "()", bytes_of<double>({2.5}), 3)));
  EXPECT_TRUE(scalar[0].shape.empty());
  // A big-endian array binds to the same values.
  std::string big = bytes_of<float>({1.5f, -2.0f});
  for (std::size_t i = 0; i < big.size(); i += 4) std::reverse(big.begin() + i, big.begin() + i + 4);
  const std::vector<array_data> be = read_array_file(write("b.npy", npy_image(">f4", "(2,)", big)));
  const std::vector<tensor> t = bind_arrays({{"x", dtype::f32, {2}, {}}}, be, "input");
  EXPECT_EQ(t[0].to_vector(), (std::vector<double>{1.5, -2.0}));
}

TEST_F(JudgeFiles, CorruptFilesAreOneErrorNamingTheFile) {
  const std::string bad_magic = write("bad.npy", "not an array");
  EXPECT_EQ(error_of([&] { read_array_file(bad_magic); }),
            "'" + bad_magic + "': it is no NumPy .npy array (no \\x93NUMPY magic)");
  const std::string truncated = write("t.npy", npy_image("<f4", "(4,)", bytes_of<float>({1, 2, 3})));
  EXPECT_NE(error_of([&] { read_array_file(truncated); }).find("holds 12 bytes of data for shape [4] of '<f4' (16 bytes)"),
            std::string::npos);
  const std::string structured = write("r.npy", npy_image("[('a', '<f4')]", "(1,)", bytes_of<float>({1})));
  EXPECT_NE(error_of([&] { read_array_file(structured); }).find("'" + structured + "'"), std::string::npos);
  const std::string short_header = write("h.npy", std::string("\x93NUMPY\x02\x00\x10\x00", 10));
  EXPECT_NE(error_of([&] { read_array_file(short_header); }).find("ends inside its header"), std::string::npos);
  const std::string not_zip = write("n.npz", "PK but not really");
  EXPECT_NE(error_of([&] { read_array_file(not_zip); }).find("no readable .npz archive"), std::string::npos);
  EXPECT_NE(error_of([&] { read_array_file((dir / "missing.npy").string()); }).find("no such file"), std::string::npos);
  const std::string csv = write("x.csv", "1,2");
  EXPECT_NE(error_of([&] { read_array_file(csv); }).find("reads arrays from .npy, .npz and ONNX TensorProto .pb"), std::string::npos);
}

TEST_F(JudgeFiles, OnnxTensorProtosRawTypedAndBad) {
  auto save = [&](const onnx::TensorProto& t, const std::string& file) {
    std::string bytes;
    t.SerializeToString(&bytes);
    return write(file, bytes);
  };
  onnx::TensorProto raw;  // raw_data, as numpy_helper.from_array writes
  raw.set_name("A");
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  raw.set_raw_data(bytes_of<float>({1.5f, -2.0f}));
  const std::vector<array_data> a = read_array_file(save(raw, "raw.pb"));
  EXPECT_EQ(a.at(0).name, "A");
  EXPECT_EQ(a.at(0).type, "f32");
  EXPECT_EQ(bind_arrays({{"A", dtype::f32, {2}, {}}}, a, "input")[0].to_vector(), (std::vector<double>{1.5, -2.0}));

  onnx::TensorProto typed;  // bf16 bits one per int32_data entry, as make_tensor writes
  typed.set_data_type(onnx::TensorProto::BFLOAT16);
  typed.add_dims(1);
  typed.add_dims(2);
  typed.add_int32_data(0x3fc0);  // 1.5
  typed.add_int32_data(0xc000);  // -2
  const std::vector<array_data> b = read_array_file(save(typed, "unnamed.pb"));
  EXPECT_EQ(b.at(0).name, "unnamed");  // no tensor name: the file's stem
  EXPECT_EQ(bind_arrays({{"x", dtype::bf16, {1, 2}, {}}}, b, "input")[0].to_vector(), (std::vector<double>{1.5, -2.0}));

  onnx::TensorProto text = raw;
  text.set_data_type(onnx::TensorProto::STRING);
  EXPECT_NE(error_of([&] { read_array_file(save(text, "s.pb")); }).find("ONNX element type 8, none opval has"),
            std::string::npos);
  onnx::TensorProto external = raw;
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_NE(error_of([&] { read_array_file(save(external, "e.pb")); }).find("external file"), std::string::npos);
  onnx::TensorProto short_data = raw;
  short_data.add_dims(3);
  EXPECT_NE(error_of([&] { read_array_file(save(short_data, "short.pb")); }).find("8 bytes of data for shape [2,3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_array_file(write("junk.pb", "\xff\xff\xff")); }).find("no serialized ONNX TensorProto"),
            std::string::npos);
}

TEST_F(JudgeFiles, TheCliJudgesFilesAndWritesTheirRepro) {
  std::vector<double> x = normal_values(257, 5);
  std::string xs, ys, truncated;
  for (double v : x) {
    const float f = static_cast<float>(v);
    xs.append(reinterpret_cast<const char*>(&f), 4);
    for (rounding r : {rounding::rne, rounding::rz}) {
      const tensor b = with_values(dtype::bf16, {1}, {v}, r);
      (r == rounding::rne ? ys : truncated).append(static_cast<const char*>(b.data()), 2);
    }
  }
  write("x.npy", npy_image("<f4", "(257,)", xs));
  write("y.npy", npy_image("|V2", "(257,)", ys));
  write("y truncated.npy", npy_image("|V2", "(257,)", truncated));
  const std::string problem = "cast shape=257 dt=f32:f32:bf16";
  const testing::cli_result ok =
      testing::run_cli(OPVAL_CLI_PATH, dir, {"judge", problem, "--inputs", "x.npy", "--outputs", "y.npy", "--jsonl", "j.jsonl"});
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("1 passed, 0 failed"), std::string::npos) << ok.out;
  EXPECT_NE(testing::read_all(dir / "j.jsonl").find("\"not_applicable\""), std::string::npos);
  const testing::cli_result bad =
      testing::run_cli(OPVAL_CLI_PATH, dir, {"judge", problem, "--inputs", "x.npy", "--outputs", "y truncated.npy"});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("repro: opval judge 'cast shape=257 dt=f32:f32:bf16' --inputs 'x.npy' --outputs "
                         "'y truncated.npy'"),
            std::string::npos)
      << bad.out;
  const testing::cli_result wrong =
      testing::run_cli(OPVAL_CLI_PATH, dir, {"judge", problem, "--inputs", "y.npy", "--outputs", "y.npy"});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_EQ(wrong.err_lines().size(), 1u) << wrong.err;
  EXPECT_NE(wrong.err.find("input 'x': the array is stored as '|V2'"), std::string::npos) << wrong.err;
}

// The judgement runs in a worker (process isolation, the default): an alternative reference
// that crashes or hangs there is the judgement's CRASH or TIMEOUT, and opval goes on to report it.
TEST_F(JudgeFiles, AReferenceThatCrashesOrHangsIsTheVerdictNotOpvalsEnd) {
  // The misbehaving GEMMs misbehave on this one problem (tests/cpp/test_isolation.cpp).
  const std::string problem = "matmul m=4 n=5 k=3 dt=f32:f32:f32";
  std::string a, b, c;
  for (int i = 0; i < 12; ++i) a += bytes_of<float>({static_cast<float>(i % 5) - 2});
  for (int i = 0; i < 15; ++i) b += bytes_of<float>({static_cast<float>(i % 3) - 1});
  for (int i = 0; i < 20; ++i) c += bytes_of<float>({static_cast<float>(i) / 4});
  write("A.npy", npy_image("<f4", "(4, 3)", a));
  write("B.npy", npy_image("<f4", "(3, 5)", b));
  write("dst.npy", npy_image("<f4", "(4, 5)", c));
  const std::vector<std::string> judge{"judge", problem, "--inputs", "A.npy", "B.npy", "--outputs", "dst.npy"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = judge;
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_cli(OPVAL_CLI_PATH, dir, args);
  };
  const testing::cli_result crashed = with({"--reference", OPVAL_MISBEHAVING_GEMM_SEGFAULT});
  EXPECT_EQ(crashed.code, 1) << crashed.out << crashed.err;
  EXPECT_NE(crashed.out.find("CRASH"), std::string::npos) << crashed.out;
  EXPECT_NE(crashed.out.find("SIGSEGV"), std::string::npos) << crashed.out;
  EXPECT_NE(crashed.out.find("repro: opval judge 'matmul m=4 n=5 k=3 dt=f32:f32:f32' --inputs 'A.npy' --inputs 'B.npy'"),
            std::string::npos)
      << crashed.out;
  const testing::cli_result hung = with({"--reference", OPVAL_MISBEHAVING_GEMM_HANG, "--timeout", "2"});
  EXPECT_EQ(hung.code, 1) << hung.out << hung.err;
  EXPECT_NE(hung.out.find("TIMEOUT"), std::string::npos) << hung.out;
  // The same judgement against a reference that works: a verdict on the data (dst is wrong).
  const testing::cli_result judged = with({"--reference", OPVAL_MISBEHAVING_GEMM_NONE});
  EXPECT_EQ(judged.code, 1) << judged.out << judged.err;
  EXPECT_NE(judged.out.find("FAILED"), std::string::npos) << judged.out;
}

}  // namespace
}  // namespace opval
