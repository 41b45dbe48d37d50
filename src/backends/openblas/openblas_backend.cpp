// The `openblas` backend: matmul as OpenBLAS's cblas_sgemm (dt=f32) and cblas_dgemm (dt=f64),
// through the BLAS backends' shared code (src/backends/common_blas/cblas_backend.hpp).
#include <cblas.h>

#include <string>

#include "backends/common_blas/cblas_backend.hpp"
#include "backends/common_blas/cblas_calls.hpp"

// Not in cblas.h: OpenBLAS's pool shutdown (its fork handler's), after which the next call
// starts the pool again (blas_server.c's exec_blas).
extern "C" int blas_thread_shutdown_(void);

namespace opval {
namespace {

struct openblas_library : blas::standard_cblas<openblas_library, blasint> {
  static constexpr const char* name = "openblas";
  static constexpr const char* library = "libopenblas";
  static std::string version() { return std::string(openblas_get_config()) + " (core " + openblas_get_corename() + ")"; }
  static std::string kernel() { return std::string("OpenBLAS core ") + openblas_get_corename(); }
  static int threads() { return openblas_get_num_threads(); }
  static void set_threads(int n) { openblas_set_num_threads(n); }
  // The workers poll for work for 2^28 cycles (OPENBLAS_THREAD_TIMEOUT) after every call;
  // stopping them costs 0.1 ms here, restarting them on the next call about as much.
  static void release_threads() { blas_thread_shutdown_(); }
};

}  // namespace

OPVAL_REGISTER_BACKEND(openblas, blas::make_cblas_backend<openblas_library>);

}  // namespace opval
