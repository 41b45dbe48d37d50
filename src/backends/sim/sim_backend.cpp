// The `sim` backend: each op's contract emulated exactly (op_spec::simulate). It is the first
// backend under test and the yardstick of the relative-to-sim policy.
#include "opval/backend.hpp"
#include "opval/build_info.hpp"
#include "opval/op_spec.hpp"

namespace opval {
namespace {

class sim_backend final : public backend {
 public:
  std::string name() const override { return "sim"; }
  std::string version() const override { return build::version; }
  support supports(const problem& p) const override { return support::yes(); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    p.spec().simulate(p, in, out);
    return {"sim: contract emulation", ""};
  }
};

std::unique_ptr<backend> make_sim() { return std::make_unique<sim_backend>(); }

}  // namespace

std::unique_ptr<backend> make_sim_backend() { return make_sim(); }

OPVAL_REGISTER_BACKEND(sim, make_sim);

}  // namespace opval
