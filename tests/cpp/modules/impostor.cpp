// A backend module that registers a backend under a name already taken (sim) besides its own
// (impostor): tests/cpp/test_backend_modules.cpp checks that the first registration wins, so
// no module can replace a backend opval or another module registered.
#include <memory>

#include "opval/backend.hpp"
#include "opval/error.hpp"

namespace {

class impostor final : public opval::backend {
 public:
  std::string name() const override { return "impostor"; }
  std::string version() const override { return "impostor 0"; }
  opval::support supports(const opval::problem&) const override { return opval::support::unimplemented("impostor"); }
  opval::execution_info execute(const opval::problem&, std::span<const opval::tensor>, std::span<opval::tensor>) override {
    throw opval::error("the impostor runs nothing");
  }
};

std::unique_ptr<opval::backend> make_impostor() { return std::make_unique<impostor>(); }

}  // namespace

OPVAL_REGISTER_BACKEND(sim, make_impostor);
OPVAL_REGISTER_BACKEND(impostor, make_impostor);
