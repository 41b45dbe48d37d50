// A backend module that crashes while it is loaded (its static initializer aborts), as a
// broken build of a library might: tests/cpp/test_backend_modules.cpp puts it on
// OPVAL_BACKENDS_PATH and checks that opval survives with one error line.
#include <cstdlib>

namespace {
const int crash = (std::abort(), 0);
}  // namespace
