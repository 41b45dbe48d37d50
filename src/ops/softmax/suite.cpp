// softmax: the suites, the family's (common_softmax/softmax_family.hpp: ragged and prime
// shapes, every axis position, every fill and every contract) on op softmax.
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_softmax/softmax_family.hpp"
#include "ops/softmax/softmax.hpp"

namespace opval::ops::softmax {

std::vector<std::string> softmax_spec::suite(std::string_view tag) const { return softmax_family_suite(name(), tag); }

}  // namespace opval::ops::softmax
