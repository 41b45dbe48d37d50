#pragma once
// A backend as Python holds it: the instance, and how a worker process makes the same one.
#include <memory>

#include "opval/backend.hpp"
#include "core/isolation.hpp"

namespace opval::python {

struct backend_handle {
  std::shared_ptr<backend> impl;
  /// A registered backend's name or a plugin's path; both empty for a Python callable, which
  /// only runs in this process.
  backend_ref ref;
  bool isolatable() const { return !ref.name.empty() || !ref.plugin_path.empty(); }
};

}  // namespace opval::python
