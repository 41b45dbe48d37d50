#include "opval/op_spec.hpp"

#include "core/fill.hpp"

namespace opval {

std::vector<std::string> op_spec::fills() const { return generic_fill_names(); }

}  // namespace opval
