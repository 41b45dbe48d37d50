#pragma once
// Something that executes problems: the built-in `sim` backend, real libraries, plugins.
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "opval/verdict.hpp"

namespace opval {

/// Whether a backend can run a problem; a problem it cannot run is SKIPPED (not supported
/// here, e.g. a type the CPU lacks) or UNIMPLEMENTED (the backend has no such kernel).
struct support {
  bool ok = true;
  state st = state::skipped;
  std::string reason;
  static support yes() { return {}; }
  static support skipped(std::string why) { return {false, state::skipped, std::move(why)}; }
  static support unimplemented(std::string why) {
    return {false, state::unimplemented, std::move(why)};
  }
};

/// Thrown by a backend's prepare or execute that meets a problem it cannot run after all, found
/// only at run time (a shape its heuristics reject, a workspace the device cannot hold): the
/// case is SKIPPED with what() as its reason, as if supports() had said so. Not a defect of
/// the kernel, unlike any other exception (FAILED). Python kernels raise opval.Unsupported and
/// plugins of ABI minor 1 return OPVAL_PLUGIN_DECLINED (opval/plugin.h), which become this.
class declined : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What actually ran: the implementation name and the contract it really computed.
struct execution_info {
  std::string implementation;
  std::string actual_contract;  ///< empty = as asked
  /// Set by a backend run as a float64 reference (core/alternative_reference.hpp) whose
  /// results are nonetheless rounded to the problem's output types: a cast, whose conversion
  /// is the op. It is then judged as a reference at the contract.
  bool rounded_to_output = false;
};

/// A backend under test. A case runs as prepare -> execute -> synchronize, on the same
/// tensors, so that the kernel's time is measured apart from the set-up around it.
class backend {
 public:
  virtual ~backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  /// Capability query for one problem.
  virtual support supports(const problem& p) const = 0;
  /// Everything before the computation: primitive creation, kernel builds, device allocation
  /// and host-to-device copies of `in`. Called before every execute with the same tensors.
  virtual void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) {}
  /// Runs p on inputs (as op_spec::inputs describes) writing outputs (as outputs describes);
  /// a device backend may return once the work is launched. Throws `declined` to decline p.
  virtual execution_info execute(const problem& p, std::span<const tensor> in,
                                 std::span<tensor> out) = 0;
  /// Waits for the work execute launched and leaves its results in `out` (device-to-host
  /// copies). Returns the kernel's time as the device measured it (CUDA events), if it can.
  virtual std::optional<double> synchronize(std::span<tensor> out) { return std::nullopt; }
  /// Sets the thread count of the backend's own pool (OpenBLAS's, not OpenMP's, which the
  /// benchmark sets itself) and returns the count before, to restore; nullopt for a backend
  /// with no pool of its own.
  virtual std::optional<int> set_threads(int n) { return std::nullopt; }
  /// The runner's own parallel work follows (the fill before the kernel's runs; the scans, the
  /// reference and the bound after them): a backend whose pool keeps its threads busy between
  /// calls stops them, so that they do not share the cores with that work. OpenBLAS's workers
  /// poll for about 2^28 cycles after each call and after the library loads; on two cores that
  /// slowed a 4096^3 case's own work by 15-400 ms and a 1024^2 fill from 2.5 to 22 ms. The next
  /// execute restarts the pool. Not called between a benchmark's timed repetitions.
  virtual void release_threads() {}
};

/// How a worker makes a backend: a registered backend by name, or a kernel plugin by path
/// (loaded in the worker, so its constructors and kernels run there).
struct backend_ref {
  bool empty() const { return name.empty() && plugin_path.empty(); }
  std::string name;         ///< a registered backend (empty for a plugin)
  std::string plugin_path;  ///< a plugin library (empty for a registered backend)
};

using backend_factory = std::unique_ptr<backend> (*)();

/// Names of all registered backends.
std::vector<std::string> backend_names();
/// A new instance of the backend `name`; throws opval::error listing the known ones.
std::unique_ptr<backend> make_backend(std::string_view name);

namespace detail {
struct backend_registrar {
  backend_registrar(std::string name, backend_factory factory);
};
}  // namespace detail

}  // namespace opval

#define OPVAL_REGISTER_BACKEND(name, factory) \
  static const ::opval::detail::backend_registrar opval_backend_registrar_##name{#name, factory}
