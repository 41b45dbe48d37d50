// Tensors: layouts (strides, padding, offset, alignment), storage through allocators, views,
// element access, conversion and comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "opval/error.hpp"
#include "opval/tensor.hpp"

namespace {

using opval::dims;
using opval::dtype;
using opval::layout;
using opval::tensor;

// Records what it is asked for and hands out aligned memory.
class counting_allocator final : public opval::allocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment) override {
    ++allocations;
    last_bytes = bytes;
    last_alignment = alignment;
    live_bytes += bytes;
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept override {
    ++deallocations;
    live_bytes -= bytes;
    ::operator delete(p, std::align_val_t(alignment));
  }
  std::string name() const override { return "counting"; }

  int allocations = 0, deallocations = 0;
  std::size_t last_bytes = 0, last_alignment = 0, live_bytes = 0;
};

// Distinct values 1, 2, 3, ... in logical order.
void fill_iota(tensor& t) {
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set_at(i, static_cast<double>(i + 1));
}

TEST(tensor_layout, defaults_are_row_major_contiguous_and_zeroed) {
  tensor t(dtype::f32, {2, 3, 4});
  EXPECT_EQ(t.type(), dtype::f32);
  EXPECT_EQ(t.shape(), (dims{2, 3, 4}));
  EXPECT_EQ(t.strides(), (dims{12, 4, 1}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
  for (double v : t.to_vector()) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(tensor().empty());
}

// Large host buffers start on a 2 MiB boundary so that all of them can be in huge pages (the
// advice itself changes nothing observable here); they are zeroed like small ones, and many
// allocations and frees of either size in turn leave the heap sound (the free's alignment must
// match the allocation's).
TEST(tensor_layout, large_buffers_start_on_a_huge_page_boundary) {
  for (int round = 0; round < 8; ++round) {
    tensor big(dtype::f64, {1024, 1024 + round});  // 8 MiB and more
    tensor small(dtype::f64, {1024, 8});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (std::uintptr_t{2} << 20), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 64, 0u);
    const double* d = big.data_as<double>();
    for (std::int64_t i = 0; i < big.numel(); i += 4099) ASSERT_EQ(d[i], 0.0);
    big.set_at(big.numel() - 1, 1.5);
    EXPECT_EQ(big.at(big.numel() - 1), 1.5);
  }
}

TEST(tensor_layout, element_sizes) {
  const std::pair<dtype, std::size_t> sizes[] = {
      {dtype::f64, 8}, {dtype::f32, 4}, {dtype::tf32, 4}, {dtype::f16, 2}, {dtype::bf16, 2},
      {dtype::f8_e4m3, 1}, {dtype::f8_e5m2, 1}, {dtype::i8, 1}, {dtype::u8, 1}, {dtype::i32, 4},
      {dtype::i64, 8}, {dtype::boolean, 1}};
  for (auto [t, size] : sizes) EXPECT_EQ(tensor(t, {3}).element_size(), size) << opval::to_string(t);
}

TEST(tensor_layout, helpers) {
  EXPECT_EQ(opval::row_major_strides({2, 3, 4}), (dims{12, 4, 1}));
  EXPECT_EQ(opval::row_major_strides({}), dims{});
  EXPECT_EQ(opval::padded_strides({2, 3, 4}, 7), (dims{21, 7, 1}));
  EXPECT_EQ(opval::padded_strides({5}, 9), dims{1});
  EXPECT_THROW(opval::padded_strides({3, 4}, 3), opval::error);
  EXPECT_EQ(opval::element_count({2, 3, 4}), 24);
  EXPECT_EQ(opval::element_count({}), 1);
  EXPECT_EQ(opval::element_count({3, 0}), 0);
  EXPECT_EQ(opval::to_string(dims{2, 3, 4}), "2x3x4");
  EXPECT_EQ(opval::to_string(dims{}), "scalar");
}

TEST(tensor_layout, padded_leading_dimension_places_rows_ld_apart) {
  counting_allocator alloc;
  tensor t(dtype::f32, {3, 4}, layout{opval::padded_strides({3, 4}, 6)}, alloc);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(alloc.last_bytes, (2 * 6 + 4) * sizeof(float));  // the last row is not padded
  fill_iota(t);
  const float* p = t.data_as<float>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(p[r * 6 + c], r * 4 + c + 1);
  EXPECT_EQ(p[4], 0.0f);  // padding untouched
  std::vector<double> want(12);
  for (int i = 0; i < 12; ++i) want[i] = i + 1;
  EXPECT_EQ(t.to_vector(), want);
}

TEST(tensor_layout, column_major_strides) {
  tensor t(dtype::f16, {4, 3}, layout{{1, 4}});
  EXPECT_FALSE(t.is_contiguous());
  fill_iota(t);
  const auto* p = t.data_as<std::uint16_t>();
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(opval::decode(dtype::f16, p[r + 4 * c]), r * 3 + c + 1) << r << "," << c;
}

TEST(tensor_layout, offset_and_alignment_reach_the_allocator) {
  counting_allocator alloc;
  {
    tensor t(dtype::bf16, {2, 8}, layout{{}, 5, 4096}, alloc);
    EXPECT_EQ(alloc.allocations, 1);
    EXPECT_EQ(alloc.last_alignment, 4096u);
    EXPECT_EQ(alloc.last_bytes, (5 + 16) * 2u);
    EXPECT_EQ(t.offset(), 5);
    const auto data = reinterpret_cast<std::uintptr_t>(t.data());
    EXPECT_EQ((data - 5 * 2) % 4096, 0u);  // the allocation is aligned; data starts 5 elements in
    EXPECT_EQ(data % 4096, 10u);
    EXPECT_TRUE(t.is_contiguous());
    fill_iota(t);
    EXPECT_EQ(t.at(15), 16.0);
  }
  EXPECT_EQ(alloc.deallocations, 1);
  EXPECT_EQ(alloc.live_bytes, 0u);
  EXPECT_THROW(tensor(dtype::f32, {2}, layout{{}, 0, 48}), opval::error);  // not a power of two
  EXPECT_THROW(tensor(dtype::f32, {2}, layout{{}, -1}), opval::error);
}

TEST(tensor_storage, views_keep_the_allocation_alive_until_the_last_one_goes) {
  counting_allocator alloc;
  tensor view;
  {
    tensor t(dtype::i32, {4, 5}, {}, alloc);
    fill_iota(t);
    view = t.transpose(0, 1).slice(0, 1, 5, 2);
    tensor copy = t;  // shallow
    copy.set_at(0, -7.0);
    EXPECT_EQ(t.at(0), -7.0);
  }
  EXPECT_EQ(alloc.allocations, 1);
  EXPECT_EQ(alloc.deallocations, 0);
  EXPECT_EQ(view.get(std::vector<std::int64_t>{0, 0}), 2.0);  // t[0][1]
  view = tensor();
  EXPECT_EQ(alloc.deallocations, 1);
  EXPECT_EQ(alloc.live_bytes, 0u);
}

TEST(tensor_views, permute_and_transpose_swap_strides) {
  tensor t(dtype::f64, {2, 3, 4});
  fill_iota(t);
  const std::vector<int> order{2, 0, 1};
  tensor p = t.permute(order);
  EXPECT_EQ(p.shape(), (dims{4, 2, 3}));
  EXPECT_EQ(p.strides(), (dims{1, 12, 4}));
  EXPECT_FALSE(p.is_contiguous());
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(p.get(std::vector<std::int64_t>{k, i, j}), t.get(std::vector<std::int64_t>{i, j, k}));
  tensor tt = t.transpose(0, 2);
  EXPECT_EQ(tt.shape(), (dims{4, 3, 2}));
  EXPECT_EQ(tt.get(std::vector<std::int64_t>{3, 1, 0}), t.get(std::vector<std::int64_t>{0, 1, 3}));
  // A view's contiguous copy has row-major strides and the permuted order.
  tensor c = p.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector(), p.to_vector());
  EXPECT_EQ(c.at(1), t.at(4));  // p[0][0][1] = t[0][1][0]
}

TEST(tensor_views, bulk_paths_agree_with_element_access_on_4d_views) {
  tensor t(dtype::f16, {3, 4, 5, 6}, opval::layout{opval::padded_strides({3, 4, 5, 6}, 9), 2});
  fill_iota(t);
  const std::vector<int> order{3, 1, 0, 2};
  const tensor v = t.permute(order).slice(1, 1, 4, 2).slice(3, 0, 5, 3);
  ASSERT_EQ(v.shape(), (dims{6, 2, 3, 2}));
  const std::vector<double> values = v.to_vector();
  const tensor c = v.contiguous(), f = v.to(dtype::f32);
  tensor w(dtype::f16, v.shape(), opval::layout{{1, 6, 12, 36}});
  w.assign(values);
  for (std::int64_t i = 0; i < v.numel(); ++i) {
    ASSERT_EQ(values[i], v.at(i)) << i;
    ASSERT_EQ(c.at(i), v.at(i)) << i;
    ASSERT_EQ(f.at(i), v.at(i)) << i;
    ASSERT_EQ(w.at(i), v.at(i)) << i;
  }
  EXPECT_TRUE(v.bitwise_equal(w));
  EXPECT_TRUE(tensor().bitwise_equal(tensor()));
  EXPECT_FALSE(tensor(dtype::f32, {}).bitwise_equal(tensor()));
}

TEST(tensor_views, slice_with_step_and_writes_through) {
  tensor t(dtype::f32, {3, 10});
  fill_iota(t);
  tensor s = t.slice(1, 1, 9, 3);  // columns 1, 4, 7
  EXPECT_EQ(s.shape(), (dims{3, 3}));
  EXPECT_EQ(s.strides(), (dims{10, 3}));
  EXPECT_EQ(s.offset(), 1);
  EXPECT_EQ(s.to_vector(), (std::vector<double>{2, 5, 8, 12, 15, 18, 22, 25, 28}));
  s.set(std::vector<std::int64_t>{2, 1}, -1.0);
  EXPECT_EQ(t.get(std::vector<std::int64_t>{2, 4}), -1.0);
  tensor rows = t.slice(0, 1, 3);
  EXPECT_EQ(rows.shape(), (dims{2, 10}));
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_EQ(rows.at(0), 11.0);
  EXPECT_EQ(t.slice(0, 2, 2).numel(), 0);
  // One row of a padded matrix is contiguous: extent-1 dimensions never step.
  tensor padded(dtype::f32, {4, 5}, layout{opval::padded_strides({4, 5}, 8)});
  EXPECT_TRUE(padded.slice(0, 2, 3).is_contiguous());
  EXPECT_FALSE(padded.slice(0, 2, 4).is_contiguous());
}

TEST(tensor_views, reshape) {
  tensor t(dtype::i8, {2, 6});
  fill_iota(t);
  tensor r = t.reshape({3, 2, 2});
  EXPECT_EQ(r.shape(), (dims{3, 2, 2}));
  EXPECT_EQ(r.strides(), (dims{4, 2, 1}));
  EXPECT_EQ(r.to_vector(), t.to_vector());
  EXPECT_EQ(t.slice(0, 1, 2).reshape({6}).at(0), 7.0);  // keeps the view's offset
  EXPECT_THROW(t.reshape({5, 2}), opval::error);
  EXPECT_THROW(t.reshape({-2, -6}), opval::error);
  EXPECT_THROW(t.transpose(0, 1).reshape({12}), opval::error);
  EXPECT_EQ(t.transpose(0, 1).contiguous().reshape({12}).at(1), 7.0);
}

TEST(tensor_access, multi_index_linear_and_unravel) {
  tensor t(dtype::f32, {2, 3, 4}, layout{{40, 10, 2}, 3});
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const dims idx = t.unravel(i);
    EXPECT_EQ(idx, (dims{i / 12, i / 4 % 3, i % 4}));
    t.set(idx, static_cast<double>(i) * 0.5);
  }
  for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.at(i), static_cast<double>(i) * 0.5);
  EXPECT_EQ(t.data_as<float>()[40 + 20 + 6], 23 * 0.5);  // (1, 2, 3) at 40 + 2*10 + 3*2
  tensor scalar(dtype::f64, {});
  EXPECT_EQ(scalar.numel(), 1);
  scalar.set_at(0, 2.5);
  EXPECT_EQ(scalar.get(std::vector<std::int64_t>{}), 2.5);
  tensor none(dtype::f32, {0, 3});
  EXPECT_EQ(none.numel(), 0);
  EXPECT_TRUE(none.to_vector().empty());
  EXPECT_TRUE(none.contiguous().is_contiguous());
}

TEST(tensor_access, set_rounds_with_the_requested_mode) {
  tensor t(dtype::f16, {4});
  t.set_at(0, 1 + 0x1p-11);                      // tie: to even
  t.set_at(1, 1 + 0x1p-11 + 0x1p-20, opval::rounding::rz);
  t.set_at(2, 1e6);
  t.set_at(3, 1e6, opval::rounding::rne, opval::overflow::saturate);
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1.0, 1.0, std::numeric_limits<double>::infinity(), 65504.0}));
  tensor i(dtype::u8, {2});
  i.set_at(0, -3.0);
  i.set_at(1, 2.5);
  EXPECT_EQ(i.to_vector(), (std::vector<double>{0.0, 2.0}));
}

TEST(tensor_access, bad_indices_and_shapes_throw) {
  tensor t(dtype::f32, {2, 3});
  EXPECT_THROW(t.get(std::vector<std::int64_t>{2, 0}), opval::error);
  EXPECT_THROW(t.get(std::vector<std::int64_t>{0, -1}), opval::error);
  EXPECT_THROW(t.get(std::vector<std::int64_t>{0}), opval::error);
  EXPECT_THROW(t.set(std::vector<std::int64_t>{0, 3}, 1.0), opval::error);
  EXPECT_THROW(t.at(6), opval::error);
  EXPECT_THROW(t.set_at(-1, 0.0), opval::error);
  EXPECT_THROW(t.unravel(6), opval::error);
  EXPECT_THROW(t.permute(std::vector<int>{0, 0}), opval::error);
  EXPECT_THROW(t.permute(std::vector<int>{0}), opval::error);
  EXPECT_THROW(t.transpose(0, 2), opval::error);
  EXPECT_THROW(t.slice(1, 0, 4), opval::error);
  EXPECT_THROW(t.slice(1, 2, 1), opval::error);
  EXPECT_THROW(t.slice(1, 0, 2, 0), opval::error);
  EXPECT_THROW(t.slice(2, 0, 1), opval::error);
  EXPECT_THROW(t.assign(std::vector<double>(5)), opval::error);
  EXPECT_THROW(tensor(dtype::f32, {2, -1}), opval::error);
  EXPECT_THROW(tensor(dtype::f32, {2, 3}, layout{{1}}), opval::error);
  EXPECT_THROW(tensor(dtype::f32, {2, 3}, layout{{-3, 1}}), opval::error);
}

TEST(tensor_convert, to_rounds_like_round_to_from_any_layout) {
  tensor src(dtype::f64, {3, 5}, layout{opval::padded_strides({3, 5}, 7), 2});
  const std::vector<double> values{0.1,   -2.7,  1e6,  -1e6, 3.5,  0x1p-30, -0.0, 65519.0,
                                   65520.0, 447.0, 465.0, -500, 2.5, 1.0 / 3, 1e-300};
  src.assign(values);
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::f8_e4m3, dtype::f8_e5m2, dtype::i8, dtype::u8})
    for (auto r : {opval::rounding::rne, opval::rounding::rz})
      for (auto o : {opval::overflow::ieee, opval::overflow::saturate}) {
        tensor d = src.to(t, r, o);
        EXPECT_EQ(d.type(), t);
        EXPECT_EQ(d.shape(), src.shape());
        EXPECT_TRUE(d.is_contiguous());
        for (std::size_t i = 0; i < values.size(); ++i) {
          const double want = opval::round_to(t, values[i], r, o);
          const double got = d.at(static_cast<std::int64_t>(i));
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(got));
          else EXPECT_TRUE(got == want && std::signbit(got) == std::signbit(want)) << got << " vs " << want;
        }
      }
  // tf32 storage holds f32 patterns of tf32 values.
  tensor tf = src.to(dtype::tf32);
  EXPECT_EQ(tf.element_size(), 4u);
  EXPECT_EQ(tf.to_vector()[0], opval::round_to(dtype::tf32, 0.1));
  EXPECT_NE(tf.to_vector()[0], static_cast<double>(0.1f));
}

TEST(tensor_convert, to_vector_and_assign_agree_with_at_for_every_type) {
  for (int k = 0; k <= static_cast<int>(opval::last_dtype); ++k) {
    const auto t = static_cast<dtype>(k);
    for (const layout& lay : {layout{}, layout{{1, 3}}, layout{opval::padded_strides({3, 4}, 5), 1}}) {
      tensor x(t, {3, 4}, lay);
      std::vector<double> values(12);
      for (int i = 0; i < 12; ++i) values[i] = (i % 2 ? -1 : 1) * 0.75 * i;
      x.assign(values);
      const std::vector<double> got = x.to_vector();
      for (int i = 0; i < 12; ++i) {
        if (std::isnan(got[i])) {  // e8m0 has no zero and no negatives
          EXPECT_TRUE(std::isnan(x.at(i)) && std::isnan(opval::round_to(t, values[i])))
              << opval::to_string(t) << " " << i;
          continue;
        }
        EXPECT_EQ(got[i], x.at(i));
        EXPECT_EQ(got[i], opval::round_to(t, values[i])) << opval::to_string(t) << " " << i;
      }
    }
  }
  const std::vector<double> v{1, 2, 3, 4, 5, 6};
  tensor f = opval::make_f64({2, 3}, v);
  EXPECT_EQ(f.type(), dtype::f64);
  EXPECT_EQ(f.to_vector(), v);
  EXPECT_THROW(opval::make_f64({2, 2}, v), opval::error);
}

TEST(tensor_compare, bitwise_equal_looks_at_logical_elements_only) {
  tensor a(dtype::f32, {3, 4});
  tensor b(dtype::f32, {3, 4}, layout{opval::padded_strides({3, 4}, 9), 3});
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i * 1.25;
  values[5] = std::numeric_limits<double>::quiet_NaN();
  a.assign(values);
  b.assign(values);
  b.data_as<float>()[4] = 99.0f;  // padding differs: not a logical element
  EXPECT_TRUE(a.bitwise_equal(b));
  EXPECT_TRUE(b.bitwise_equal(a));
  b.set_at(11, 0.0);
  EXPECT_FALSE(a.bitwise_equal(b));
  b.set_at(11, values[11]);
  EXPECT_TRUE(a.bitwise_equal(b));
  b.set_at(0, -0.0);  // -0 == +0 as numbers, but not bitwise
  EXPECT_FALSE(a.bitwise_equal(b));
  EXPECT_FALSE(a.bitwise_equal(a.to(dtype::f64)));
  EXPECT_FALSE(a.bitwise_equal(a.reshape({4, 3})));
  EXPECT_TRUE(a.transpose(0, 1).bitwise_equal(a.transpose(0, 1).contiguous()));
  EXPECT_FALSE(a.transpose(0, 1).contiguous().bitwise_equal(a.reshape({4, 3})));
}

}  // namespace
