// The `blis` backend: matmul as BLIS's CBLAS interface, cblas_sgemm (dt=f32) and cblas_dgemm
// (dt=f64), through the BLAS backends' shared code (src/backends/common_blas/cblas_backend.hpp).
// BLIS exports the same cblas_* symbols as OpenBLAS: both backends in one process show that the
// modules' RTLD_LOCAL loading keeps each on its own library (tests/cpp/test_blas_backends.cpp).
#include <blis.h>
#include <cblas.h>

#include <string>

#include "backends/common_blas/cblas_backend.hpp"
#include "backends/common_blas/cblas_calls.hpp"

namespace opval {
namespace {

struct blis_library : blas::standard_cblas<blis_library, f77_int> {
  static constexpr const char* name = "blis";
  static constexpr const char* library = "libblis";
  static std::string arch() { return bli_arch_string(bli_arch_query_id()); }
  static std::string version() { return std::string("BLIS ") + bli_info_get_version_str() + " (arch " + arch() + ")"; }
  static std::string kernel() { return "BLIS arch " + arch(); }
  static int threads() { return static_cast<int>(bli_thread_get_num_threads()); }
  static void set_threads(int n) { bli_thread_set_num_threads(n); }
};

}  // namespace

OPVAL_REGISTER_BACKEND(blis, blas::make_cblas_backend<blis_library>);

}  // namespace opval
