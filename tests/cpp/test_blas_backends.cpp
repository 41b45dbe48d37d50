// Two BLAS in one process. OpenBLAS and BLIS export the same cblas_sgemm; their backends are
// modules loaded with RTLD_LOCAL (src/core/backend_modules.hpp), so each calls its own library:
// version() names the file its cblas_sgemm binds to. The negative control loads the modules
// RTLD_GLOBAL, as one library linking both BLAS would be: then the first BLAS serves the
// other's backend, which the same check sees, and the backend refuses to run (SKIPPED).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/backend_modules.hpp"
#include "opval/backend.hpp"
#include "opval/runner.hpp"

namespace {

using namespace opval;

/// Whether the module of backend `name` is in this build, found without loading it.
bool have(const std::string& name) {
  for (const auto& dir : detail::backend_module_dirs())
    if (std::filesystem::exists(dir / ("libopval_backend_" + name + ".so"))) return true;
  return false;
}

TEST(BlasBackends, EachBackendCallsItsOwnLibrary) {
  if (!have("openblas") || !have("blis")) GTEST_SKIP() << "this build lacks the openblas or the blis backend";
  EXPECT_NE(make_backend("openblas")->version().find("cblas_sgemm from libopenblas"), std::string::npos)
      << make_backend("openblas")->version();
  EXPECT_NE(make_backend("blis")->version().find("cblas_sgemm from libblis"), std::string::npos)
      << make_backend("blis")->version();
  for (const char* name : {"openblas", "blis"}) {
    auto b = make_backend(name);
    for (const char* line : {"matmul m=33 n=17 k=65 dt=f32", "matmul m=8 n=5 k=300 ta=1 dt=f64"}) {
      const case_result r = run_case(parse_problem(line), *b, run_options{});
      EXPECT_EQ(r.v.st, state::passed) << name << ": " << line << ": " << r.v.reason;
      EXPECT_NE(r.exec.implementation.find(name == std::string("blis") ? "BLIS" : "OpenBLAS"), std::string::npos)
          << r.exec.implementation;
    }
  }
}

// Loaded RTLD_GLOBAL, blis first: openblas's backend then calls BLIS's cblas_sgemm.
[[noreturn]] void load_globally_and_report() {
  for (const char* name : {"blis", "openblas"})
    for (const auto& dir : detail::backend_module_dirs()) {
      const auto file = dir / (std::string("libopval_backend_") + name + ".so");
      if (::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr &&
          ::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr)
        break;
    }
  auto openblas = make_backend("openblas");
  const support s = openblas->supports(parse_problem("matmul m=4 n=4 k=4 dt=f32"));
  // Interposed, and the backend knows it: it refuses to test BLIS under OpenBLAS's name.
  const bool interposed = openblas->version().find("cblas_sgemm from libblis") != std::string::npos;
  const bool refused = !s.ok && s.st == state::skipped && s.reason.find("interposes") != std::string::npos;
  std::exit(interposed && refused ? 0 : 1);
}

TEST(BlasBackendsDeathTest, GlobalLoadingWouldInterpose) {
  if (!have("openblas") || !have("blis")) GTEST_SKIP() << "this build lacks the openblas or the blis backend";
  // A fresh process (re-executed, not forked), in which nothing has loaded the modules yet.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(load_globally_and_report(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
