// matmul: the fp64 reference on exactly the stored inputs and the contract-exact simulation
// (the sim backend's kernel), per output batch through the shared GEMM code of common_gemm.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "ops/common_gemm/block_scaled_operands.hpp"
#include "ops/common_gemm/blocked_gemm.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::matmul {

using namespace common_gemm;

namespace {

// For each output batch (row-major over `out`), the linear batch index of an operand with
// batch dims `in` (right-aligned; extents of 1 broadcast).
std::vector<std::int64_t> broadcast_map(const dims& out, const dims& in) {
  const std::int64_t count = element_count(out);
  std::vector<std::int64_t> map(count);
  const std::size_t off = out.size() - in.size();
  for (std::int64_t ob = 0; ob < count; ++ob) {
    std::int64_t rem = ob, idx = 0, mul = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
      const std::int64_t coord = rem % out[d];
      rem /= out[d];
      if (d >= off) {
        const std::int64_t extent = in[d - off];
        idx += (extent == 1 ? 0 : coord) * mul;
        mul *= extent;
      }
    }
    map[ob] = idx;
  }
  return map;
}

// Everything the three fp64 passes (reference, bound) and the simulation share: per output
// batch, the dot products of the batch's A and B slices.
template <class DotFn>
void for_each_batch(const matmul_shape& s, DotFn&& dot) {
  const auto map_a = broadcast_map(s.batch, s.batch_a), map_b = broadcast_map(s.batch, s.batch_b);
  for (std::int64_t ob = 0; ob < s.batch_count; ++ob)
    dot(ob, map_a[ob] * s.m * s.k, map_b[ob] * s.k * s.n);
}

}  // namespace

epilogue_reader reader_of(const matmul_shape& s, const epilogue_spec& e, std::span<const tensor> in) {
  return epilogue_reader(e, in, 1, s.n);
}

std::pair<std::vector<double>, std::vector<double>> operand_values(const epilogue_spec& e, std::span<const tensor> in) {
  if (e.block == 0) return {in[0].to_vector(), in[1].to_vector()};
  const operand_slots sl = slots_of(e);
  return {dequantized(in[0], in[sl.a_scale], e.block, block_axis::along_rows),
          dequantized(in[1], in[sl.b_scale], e.block, block_axis::down_columns)};
}

std::vector<double> exact_dots(const matmul_shape& s, const epilogue_spec& e, std::span<const tensor> in,
                               dot_values v) {
  auto [va, vb] = operand_values(e, in);
  const auto a = dot_operand(std::move(va), e.zp_a, v, true), b = dot_operand(std::move(vb), e.zp_b, v, false);
  std::vector<double> out(s.batch_count * s.m * s.n);
  for_each_batch(s, [&](std::int64_t ob, std::int64_t oa, std::int64_t obb) {
    reference_gemm(s.m, s.n, s.k, a.data() + oa, b.data() + obb, out.data() + ob * s.m * s.n);
  });
  return out;
}

void matmul_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  std::vector<double> y = exact_dots(s, e, in, dot_values::signed_values);
  epilogue_reference_all(p.dt, e, reader_of(s, e, in), y);
  out[0].assign(y);
}

namespace {

// The simulation with `accumulate(e, m, n, k, a, b, acc)` as each batch's dot products: the
// contract's (simulate_dot), or a hypothesis's.
template <class Accumulate>
void simulate_with(const problem& p, std::span<const tensor> in, std::span<tensor> out, Accumulate&& accumulate) {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  const auto values = operand_values(e, in);
  const std::vector<double>&a = values.first, &b = values.second;
  std::vector<double> acc(s.batch_count * s.m * s.n);
  for_each_batch(s, [&](std::int64_t ob, std::int64_t oa, std::int64_t obb) {
    accumulate(e, s.m, s.n, s.k, std::span(a).subspan(oa, s.m * s.k), std::span(b).subspan(obb, s.k * s.n),
               std::span(acc).subspan(ob * s.m * s.n, s.m * s.n));
  });
  epilogue_simulate_all(p.dt, e, reader_of(s, e, in), acc);
  out[0].assign(acc, p.dt.dst_round);
}

}  // namespace

void matmul_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  simulate_with(p, in, out, [&](const epilogue_spec& e, auto... dot) { simulate_dot(p.dt, e, dot...); });
}

std::vector<kernel_hypothesis> matmul_spec::hypotheses(const problem& p) const {
  const bool int8 = p.dt.acc == dtype::i32 && (p.dt.src == dtype::u8 || p.dt.src == dtype::i8) && p.dt.wei == dtype::i8;
  if (!int8) return {};
  const bool a_signed = p.dt.src == dtype::i8;
  return {{"the u8*s8 products summed in pairs in int16 with saturation before the int32 accumulation "
           "(x86 vpmaddubsw without VNNI; A shifted to u8 when signed)",
           [a_signed](const problem& q, std::span<const tensor> in, std::span<tensor> out) {
             simulate_with(q, in, out, [&](const epilogue_spec& e, std::int64_t m, std::int64_t n, std::int64_t k,
                                           std::span<const double> a, std::span<const double> b, std::span<double> acc) {
               dot_int_saturating_pairs(m, n, k, a, b, a_signed, e.zp_a, e.zp_b, acc);
             });
           }}};
}

}  // namespace opval::ops::matmul
