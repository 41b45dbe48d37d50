#pragma once
// The suites of the pooling ops: every contract over windows that make pooling interesting
// (non-overlapping, overlapping with padding, ceil_mode, asymmetric, window = plane, 1x1,
// dilated for max), the fills in turn and the layouts alternating.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"

namespace opval::ops::pool {

/// The windows (attribute text: mb c ih iw kh kw sh sw pads [dh dw] [ceil_mode]) of the
/// `tag` suite (smoke, regression; others: none); `dilated` adds windows with dilation.
std::vector<std::string> suite_windows(std::string_view tag, bool dilated);

/// Windows over empty tensors (an empty batch, no channels), regression only: their lines go
/// after all others (a second suite_lines), so that they move no other line's fill or layout.
std::vector<std::string> empty_windows(std::string_view tag);

/// The fills a pooling suite takes in turn: every generic fill but normal (= default).
std::vector<std::string> suite_fills();

/// The fills a suite takes in turn for one contract.
using fills_fn = std::function<std::vector<std::string>(const std::string& contract)>;

/// "<op> <shape> <extra(i)> layout=... dt=<contract> fill=<fill>" for every contract of `op`
/// and every shape, the contract's fills taken in turn and the layout alternating; `extra(i)`
/// adds attributes to the i-th line ("" for none); `keep(contract, shape)` drops lines (a
/// bound that cannot be meaningful).
std::vector<std::string> suite_lines(
    const op_spec& op, const std::vector<std::string>& shapes, const fills_fn& fills,
    const std::function<std::string(std::size_t)>& extra = {},
    const std::function<bool(const std::string& contract, const std::string& shape)>& keep = {});

/// A pooling feature table: `planes` (attribute text, the first the base) as one feature, the
/// nhwc layout, and the suite fills.
feature_table pool_features(const std::vector<std::string>& planes);

}  // namespace opval::ops::pool
