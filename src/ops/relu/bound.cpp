// relu: error model. Exact in any acc that holds x, so its compute bound is 0 (plus the
// rounding of x into acc when acc is narrower than the input, which activation_spec adds
// through the Lipschitz constant 1).
#include "ops/relu/relu.hpp"

namespace opval::ops::relu {

double relu_spec::eval_error(double, const eltwise::acc_error_model&, const problem&) const { return 0.0; }
double relu_spec::lipschitz(const problem&) const { return 1.0; }
std::string relu_spec::error_formula(const problem&) const { return "0 (relu is exact in acc)"; }

}  // namespace opval::ops::relu
