#pragma once
// The normalizations over the trailing `norm_axes` dims of x (layer_norm, rms_norm): one row
// per leading index, gamma and beta shaped as the normalized dims, rows optionally padded (ld).
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_norm/norm_common.hpp"

namespace opval::ops::norm {

/// Base of layer_norm and rms_norm: attributes shape, norm_axes, eps, affine, ld.
class trailing_axes_spec : public norm_spec {
 public:
  using norm_spec::norm_spec;
  const attr_schema& schema() const override;
  void validate(const problem& p) const override;
  geometry geometry_of(const problem& p) const override;
  /// Row-major, or with padded rows when ld is set.
  layout data_layout(const problem& p) const override;
  /// Row lengths from 1 to 4096, two normalized axes, padded rows, eps, affine, the fills, and
  /// layer_norm's statistics outputs.
  feature_table features() const override;

 protected:
  /// Descriptor lines of the `smoke` and `regression` suites of a trailing-axes norm.
  std::vector<std::string> trailing_axes_suite(std::string_view tag) const;
};

}  // namespace opval::ops::norm
