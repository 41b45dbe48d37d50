// Numeric contracts: the dt= text (shorthands, full forms, options), its errors, and the
// rounding steps contract_arith emulates.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/problem.hpp"

namespace {

using opval::contract;
using opval::contract_arith;
using opval::dtype;
using opval::parse_contract_types;
using opval::rounding;

// A contract from its dt= text plus options in descriptor syntax (`key=value key=value`).
contract with_options(const std::string& types, std::initializer_list<std::pair<const char*, const char*>> options) {
  contract c = parse_contract_types(types);
  for (const auto& [key, value] : options) EXPECT_TRUE(opval::apply_contract_option(c, key, value)) << key;
  return c;
}

// Random doubles of both signs over a few binades around 1, not representable in f32.
std::vector<double> random_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> mant(1.0, 2.0), expo(-8, 8);
  std::vector<double> xs;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = std::ldexp(mant(gen), static_cast<int>(expo(gen)));
    xs.push_back(i % 2 ? -x : x);
  }
  return xs;
}

bool same_bits(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

// --- parsing ---------------------------------------------------------------------------------

struct types_case {
  const char* text;
  dtype src, wei, math, acc, dst;
  const char* canonical;
};

TEST(contract, shorthands_and_full_forms) {
  const types_case cases[] = {
      {"f32", dtype::f32, dtype::f32, dtype::f32, dtype::f32, dtype::f32, "f32:f32:f32"},
      {"bf16", dtype::bf16, dtype::bf16, dtype::bf16, dtype::f32, dtype::bf16, "bf16:f32:bf16"},
      {"f16", dtype::f16, dtype::f16, dtype::f16, dtype::f32, dtype::f16, "f16:f32:f16"},
      {"tf32", dtype::f32, dtype::f32, dtype::tf32, dtype::f32, dtype::f32, "f32@tf32:f32:f32"},
      {"f64", dtype::f64, dtype::f64, dtype::f64, dtype::f64, dtype::f64, "f64:f64:f64"},
      {"i8", dtype::i8, dtype::i8, dtype::i8, dtype::i32, dtype::i8, "i8:i32:i8"},
      {"u8xi8:i32:f32", dtype::u8, dtype::i8, dtype::u8, dtype::i32, dtype::f32, "u8xi8:i32:f32"},
      {"f32@bf16:f32:f32", dtype::f32, dtype::f32, dtype::bf16, dtype::f32, dtype::f32, "f32@bf16:f32:f32"},
      {"f32@tf32:f32:f32", dtype::f32, dtype::f32, dtype::tf32, dtype::f32, dtype::f32, "f32@tf32:f32:f32"},
      {"f16:f16:f16", dtype::f16, dtype::f16, dtype::f16, dtype::f16, dtype::f16, "f16:f16:f16"},
      {"f8_e4m3xf8_e5m2:f32:bf16", dtype::f8_e4m3, dtype::f8_e5m2, dtype::f8_e4m3, dtype::f32, dtype::bf16,
       "f8_e4m3xf8_e5m2:f32:bf16"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.text);
    const contract c = parse_contract_types(k.text);
    EXPECT_EQ(c.src, k.src);
    EXPECT_EQ(c.wei, k.wei);
    EXPECT_EQ(c.math, k.math);
    EXPECT_EQ(c.acc, k.acc);
    EXPECT_EQ(c.mid, k.acc);  // mid defaults to acc
    EXPECT_EQ(c.dst, k.dst);
    EXPECT_EQ(c.in_round, rounding::rne);
    EXPECT_EQ(c.acc_round, rounding::rne);
    EXPECT_EQ(c.dst_round, rounding::rne);
    EXPECT_EQ(c.denorm, opval::denormals::ieee);
    EXPECT_EQ(c.types_string(), k.canonical);
    EXPECT_EQ(c.to_string(), std::string("dt=") + k.canonical);
    EXPECT_TRUE(parse_contract_types(c.types_string()) == c);
  }
  // The shorthand and its full form are the same contract.
  EXPECT_TRUE(parse_contract_types("bf16") == parse_contract_types("bf16:f32:bf16"));
  EXPECT_TRUE(parse_contract_types("tf32") == parse_contract_types("f32@tf32:f32:f32"));
}

TEST(contract, rounds_inputs_only_for_a_different_float_math_type) {
  EXPECT_TRUE(parse_contract_types("tf32").rounds_inputs());
  EXPECT_TRUE(parse_contract_types("f32@bf16:f32:f32").rounds_inputs());
  EXPECT_FALSE(parse_contract_types("f32").rounds_inputs());
  EXPECT_FALSE(parse_contract_types("bf16").rounds_inputs());
  EXPECT_FALSE(parse_contract_types("u8xi8:i32:f32").rounds_inputs());
  EXPECT_FALSE(parse_contract_types("f8_e4m3:f32:bf16").rounds_inputs());
}

TEST(contract, malformed_types_are_errors) {
  for (const char* bad : {"f33", "", "f32:f32", "f32:f32:f32:f32", "f32:f33:f32", "f32:f32:", "tf32:f32:f32",
                          "f32xtf32:f32:f32", "f32xf16xbf16:f32:f32", "@tf32:f32:f32", "f32@:f32:f32",
                          "xf32:f32:f32", "f32@q:f32:f32"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_contract_types(bad), opval::error);
  }
  try {
    parse_contract_types("tf32:f32:f32");
    ADD_FAILURE();
  } catch (const opval::error& e) {
    EXPECT_NE(std::string(e.what()).find("f32@tf32"), std::string::npos) << e.what();
  }
  try {
    parse_contract_types("bf16:f32:f3");
    ADD_FAILURE();
  } catch (const opval::error& e) {
    EXPECT_NE(std::string(e.what()).find("f3"), std::string::npos) << e.what();
  }
}

// --- options ---------------------------------------------------------------------------------

TEST(contract, options_apply_and_print) {
  contract c = parse_contract_types("bf16");
  EXPECT_FALSE(opval::apply_contract_option(c, "m", "4"));
  EXPECT_FALSE(opval::apply_contract_option(c, "fill", "normal"));
  EXPECT_TRUE(c == parse_contract_types("bf16"));  // unknown keys change nothing

  c = with_options("bf16", {{"mid", "bf16"}});
  EXPECT_EQ(c.mid, dtype::bf16);
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16 mid=bf16");
  c = with_options("bf16", {{"in_round", "rz"}});
  EXPECT_EQ(c.in_round, rounding::rz);
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16 in_round=rz");
  c = with_options("bf16", {{"acc_round", "rz"}});
  EXPECT_EQ(c.acc_round, rounding::rz);
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16 acc_round=rz");
  c = with_options("bf16", {{"dst_round", "rz"}});
  EXPECT_EQ(c.dst_round, rounding::rz);
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16 dst_round=rz");
  c = with_options("bf16", {{"denorm", "ftz"}});
  EXPECT_EQ(c.denorm, opval::denormals::ftz);
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16 denorm=ftz");
  // Setting an option to its default is not printed.
  c = with_options("bf16", {{"denorm", "ieee"}, {"acc_round", "rne"}, {"mid", "f32"}, {"ulp", "cuda"}});
  EXPECT_EQ(c.to_string(), "dt=bf16:f32:bf16");
}

TEST(contract, ulp_presets_and_lists) {
  const opval::function_accuracy cuda;
  EXPECT_TRUE(with_options("f32", {{"ulp", "cuda"}}).ulps == cuda);
  const auto opencl = with_options("f32", {{"ulp", "opencl"}}).ulps;
  EXPECT_EQ(opencl.exp, 3.0);
  EXPECT_EQ(opencl.erf, 16.0);
  EXPECT_FALSE(opencl == cuda);
  const auto exact = with_options("f32", {{"ulp", "exact"}}).ulps;
  for (double u : {exact.exp, exact.erf, exact.tanh, exact.div, exact.rsqrt, exact.log}) EXPECT_EQ(u, 0.5);
  // A list sets the named functions; the others keep CUDA's figures.
  const contract c = with_options("f32", {{"ulp", "exp:3,erf:16"}});
  EXPECT_EQ(c.ulps.exp, 3.0);
  EXPECT_EQ(c.ulps.erf, 16.0);
  EXPECT_EQ(c.ulps.tanh, cuda.tanh);
  EXPECT_EQ(c.ulps.log, cuda.log);
  EXPECT_EQ(c.to_string(), "dt=f32:f32:f32 ulp=exp:3,erf:16");  // the functions off their default
  const contract all = with_options("f32", {{"ulp", "exp:1,erf:2,tanh:3,div:4,rsqrt:5,log:6"}});
  EXPECT_EQ(all.ulps.div, 4.0);
  EXPECT_EQ(all.ulps.rsqrt, 5.0);
  EXPECT_EQ(all.ulps.log, 6.0);
}

TEST(contract, bad_option_values_are_errors) {
  const std::pair<const char*, const char*> bad[] = {
      {"mid", "f99"},      {"in_round", "up"},  {"acc_round", "rn"},  {"dst_round", ""},
      {"denorm", "daz"},   {"ulp", "exp"},      {"ulp", "exp:-1"},    {"ulp", "sin:2"},
      {"ulp", "exp:abc"},  {"ulp", "exp:1:2"},  {"ulp", ""},          {"ulp", "exp:2,"}};
  for (const auto& [key, value] : bad) {
    SCOPED_TRACE(std::string(key) + "=" + value);
    contract c = parse_contract_types("f32");
    EXPECT_THROW(opval::apply_contract_option(c, key, value), opval::error);
  }
}

// parse_contract: the whole text, types then options, as opval.Contract and declared contracts
// take it; its to_string() (with dt=) reads back, and it agrees with the piecewise parse.
TEST(contract, whole_contracts_parse_and_read_back) {
  const contract mid = opval::parse_contract("bf16:f32:bf16 mid=bf16");
  EXPECT_TRUE(mid == with_options("bf16", {{"mid", "bf16"}}));
  EXPECT_EQ(opval::options_string(mid), " mid=bf16");
  EXPECT_TRUE(opval::parse_contract("  dt=f32\tdenorm=ftz  acc_round=rz ") ==
              with_options("f32", {{"denorm", "ftz"}, {"acc_round", "rz"}}));
  EXPECT_TRUE(opval::parse_contract("f32") == parse_contract_types("f32"));
  EXPECT_EQ(opval::options_string(parse_contract_types("f32")), "");
  for (const char* text : {"bf16:f32:bf16 mid=bf16", "f32 acc_round=rz denorm=ftz deterministic=0",
                           "f32@tf32:f32:f32 in_round=rz dst_round=rz ulp=exp:3,div:2.5", "u8xi8:i32:f32"}) {
    const contract c = opval::parse_contract(text);
    EXPECT_TRUE(opval::parse_contract(c.to_string()) == c) << text << " -> " << c.to_string();
    EXPECT_EQ(c.to_string(), "dt=" + c.types_string() + opval::options_string(c));
  }
}

TEST(contract, malformed_whole_contracts_name_the_part) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "empty contract"},
      {"f32 mid", "expected key=value after the types, got 'mid'"},
      {"f32 =bf16", "expected key=value after the types, got '=bf16'"},
      {"f32 m=4", "unknown contract option 'm'"},
      {"f32 denorm=ftz denorm=ftz", "option 'denorm' is given twice"},
      {"f32 denorm=daz", "expects ieee or ftz"},
      {"f33 denorm=ftz", "f33"},
      {"denorm=ftz f32", "denorm=ftz"}};  // the types come first
  for (const auto& [text, words] : bad) {
    try {
      opval::parse_contract(text);
      ADD_FAILURE() << "parsed: " << text;
    } catch (const opval::error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << text << ": " << e.what();
    }
  }
}

TEST(contract, options_round_trip_through_a_descriptor) {
  const char* lines[] = {
      "attention b=1 h=1 lq=2 lk=3 d=4 dt=bf16:f32:bf16 mid=bf16 in_round=rz acc_round=rz dst_round=rz denorm=ftz "
      "ulp=exp:3,div:16",
      "matmul m=3 dt=tf32 in_round=rz",
      "matmul m=3 dt=f16:f32:f16 ulp=opencl",
      "matmul m=3 dt=f32 ulp=exact denorm=ftz",
      "log_softmax shape=3 dt=f32 ulp=exp:0.1234567,log:1e-7",
      "matmul m=3 dt=u8xi8:i32:f32 dst_round=rz",
  };
  for (const char* line : lines) {
    SCOPED_TRACE(line);
    const opval::problem p = opval::parse_problem(line);
    const opval::problem q = opval::parse_problem(p.to_string());
    EXPECT_TRUE(q.dt == p.dt) << p.to_string();
    EXPECT_EQ(q.to_string(), p.to_string());
  }
  const opval::problem p = opval::parse_problem(lines[0]);
  EXPECT_EQ(p.dt.mid, dtype::bf16);
  EXPECT_EQ(p.dt.in_round, rounding::rz);
  EXPECT_EQ(p.dt.acc_round, rounding::rz);
  EXPECT_EQ(p.dt.dst_round, rounding::rz);
  EXPECT_EQ(p.dt.denorm, opval::denormals::ftz);
  EXPECT_EQ(p.dt.ulps.div, 16.0);
  EXPECT_EQ(p.dt.to_string(), "dt=bf16:f32:bf16 mid=bf16 in_round=rz acc_round=rz dst_round=rz denorm=ftz ulp=exp:3,div:16");
  // A preset sets only the functions the op uses: matmul's canonical form names no log.
  EXPECT_EQ(opval::parse_problem(lines[2]).to_string(), "matmul m=3 dt=f16:f32:f16 ulp=exp:3,erf:16,tanh:5,div:2.5");
  EXPECT_EQ(opval::parse_problem(lines[4]).dt.ulps.exp, 0.1234567);
  EXPECT_EQ(opval::parse_problem(lines[4]).dt.ulps.log, 1e-7);
}

// --- contract_arith --------------------------------------------------------------------------

TEST(contract_arith, input_rounds_to_math_only_when_the_contract_says) {
  const auto xs = random_doubles(2000, 1);
  const contract_arith plain(parse_contract_types("f32"));
  const contract_arith tf32(parse_contract_types("tf32"));
  const contract_arith tf32_rz(with_options("tf32", {{"in_round", "rz"}}));
  const contract_arith in_bf16(parse_contract_types("f32@bf16:f32:f32"));
  int moved = 0, rz_differs = 0;
  for (double x : xs) {
    EXPECT_EQ(plain.input(x), x);
    EXPECT_EQ(tf32.input(x), opval::round_to(dtype::tf32, x, rounding::rne));
    EXPECT_EQ(tf32_rz.input(x), opval::round_to(dtype::tf32, x, rounding::rz));
    EXPECT_LE(std::fabs(tf32_rz.input(x)), std::fabs(x));
    EXPECT_EQ(in_bf16.input(x), opval::round_to(dtype::bf16, x, rounding::rne));
    moved += tf32.input(x) != x;
    rz_differs += tf32_rz.input(x) != tf32.input(x);
  }
  EXPECT_GT(moved, 1900);
  EXPECT_GT(rz_differs, 500);
}

TEST(contract_arith, acc_and_mid_honour_acc_round) {
  const auto xs = random_doubles(2000, 2);
  const contract_arith rne(parse_contract_types("f32"));
  const contract_arith rz(with_options("f32", {{"acc_round", "rz"}, {"mid", "bf16"}}));
  int differs = 0;
  for (double x : xs) {
    EXPECT_EQ(rne.acc(x), opval::round_to(dtype::f32, x, rounding::rne));
    EXPECT_EQ(rz.acc(x), opval::round_to(dtype::f32, x, rounding::rz));
    EXPECT_EQ(rz.mid(x), opval::round_to(dtype::bf16, x, rounding::rz));
    EXPECT_EQ(rne.mid(x), rne.acc(x));  // mid defaults to acc
    EXPECT_LE(std::fabs(rz.acc(x)), std::fabs(x));
    differs += rz.acc(x) != rne.acc(x);
  }
  EXPECT_GT(differs, 500);
}

TEST(contract_arith, out_honours_dst_round_and_overflows_to_infinity) {
  const auto xs = random_doubles(2000, 3);
  const contract_arith rne(parse_contract_types("bf16"));
  const contract_arith rz(with_options("bf16", {{"dst_round", "rz"}}));
  int differs = 0;
  for (double x : xs) {
    EXPECT_EQ(rne.out(x), opval::round_to(dtype::bf16, x, rounding::rne));
    EXPECT_EQ(rz.out(x), opval::round_to(dtype::bf16, x, rounding::rz));
    differs += rz.out(x) != rne.out(x);
  }
  EXPECT_GT(differs, 500);
  // dst_round does not leak into the accumulation.
  EXPECT_EQ(rz.acc(1.0 + 0x1.8p-24), opval::round_to(dtype::f32, 1.0 + 0x1.8p-24, rounding::rne));
  const contract_arith f16(parse_contract_types("f16"));
  EXPECT_EQ(f16.out(1e6), INFINITY);
  EXPECT_EQ(f16.out(-1e6), -INFINITY);
}

TEST(contract_arith, ftz_flushes_subnormals_to_signed_zero) {
  const contract_arith ieee(parse_contract_types("f16"));
  const contract_arith ftz(with_options("f16", {{"denorm", "ftz"}}));
  const double f32_sub = 1e-40, f16_sub = 1e-6;  // subnormal in f32 and f16 respectively
  EXPECT_NE(ieee.out(f16_sub), 0.0);
  EXPECT_TRUE(same_bits(ftz.out(f16_sub), 0.0));
  EXPECT_TRUE(same_bits(ftz.out(-f16_sub), -0.0));
  EXPECT_NE(ieee.acc(f32_sub), 0.0);
  EXPECT_TRUE(same_bits(ftz.acc(f32_sub), 0.0));
  EXPECT_TRUE(same_bits(ftz.acc(-f32_sub), -0.0));
  EXPECT_TRUE(same_bits(ftz.mid(-f32_sub), -0.0));
  EXPECT_TRUE(same_bits(ftz.input(-f16_sub), -0.0));  // in the math type f16
  EXPECT_NE(ieee.input(-f16_sub), 0.0);
  // Normal values, including the smallest, are untouched.
  const double f16_min = opval::traits(dtype::f16).min_normal;
  EXPECT_EQ(ftz.out(f16_min), f16_min);
  EXPECT_EQ(ftz.out(-1.5), -1.5);
  // A subnormal fma result flushes too.
  const contract_arith f32_ftz(with_options("f32", {{"denorm", "ftz"}}));
  EXPECT_TRUE(same_bits(f32_ftz.fma(-1e-20, 1e-20, 0.0), -0.0));
  EXPECT_NE(contract_arith(parse_contract_types("f32")).fma(-1e-20, 1e-20, 0.0), 0.0);
}

TEST(contract_arith, f32_fma_is_fused) {
  std::mt19937_64 gen(4);
  std::normal_distribution<float> normal;
  const contract_arith arith(parse_contract_types("f32"));
  int differs_from_unfused = 0;
  for (int i = 0; i < 20000; ++i) {
    const float a = normal(gen), b = normal(gen), c = normal(gen);
    const double got = arith.fma(a, b, c);
    ASSERT_TRUE(same_bits(got, std::fmaf(a, b, c))) << a << " " << b << " " << c;
    // volatile keeps the compiler from contracting the unfused form into an fma.
    volatile float product = a * b;
    volatile float unfused = product + c;
    differs_from_unfused += got != unfused;
  }
  EXPECT_GT(differs_from_unfused, 100);
}

TEST(contract_arith, fma_rounds_once_in_other_accumulators) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal;
  const contract_arith f64(parse_contract_types("f64"));
  const contract_arith bf16(parse_contract_types("bf16:bf16:bf16"));
  int differs_from_unfused = 0;
  for (int i = 0; i < 20000; ++i) {
    const double a = normal(gen), b = normal(gen), c = normal(gen);
    ASSERT_TRUE(same_bits(f64.fma(a, b, c), std::fma(a, b, c)));
    const double ba = opval::round_to(dtype::bf16, a), bb = opval::round_to(dtype::bf16, b),
                 bc = opval::round_to(dtype::bf16, c);
    // bf16 products and sums are exact in double, so one rounding of the double is the fma.
    const double fused = bf16.fma(ba, bb, bc);
    ASSERT_EQ(fused, opval::round_to(dtype::bf16, ba * bb + bc));
    differs_from_unfused += fused != bf16.acc(bf16.acc(ba * bb) + bc);
  }
  EXPECT_GT(differs_from_unfused, 100);
}

}  // namespace
