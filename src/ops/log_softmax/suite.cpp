// log_softmax: the suites, the family's (common_softmax/softmax_family.hpp: ragged and prime
// shapes, every axis position, every fill and every contract) on op log_softmax.
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_softmax/softmax_family.hpp"
#include "ops/log_softmax/log_softmax.hpp"

namespace opval::ops::log_softmax {

std::vector<std::string> log_softmax_spec::suite(std::string_view tag) const {
  return softmax::softmax_family_suite(name(), tag);
}

}  // namespace opval::ops::log_softmax
