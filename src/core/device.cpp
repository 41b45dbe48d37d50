// The device runtime registry and device copies of host tensors.
#include "core/device.hpp"

#include <map>

#include "core/backend_modules.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

using runtime_getter = device_runtime& (*)();

std::map<device_kind, runtime_getter>& runtimes() {
  static std::map<device_kind, runtime_getter> table;
  return table;
}

}  // namespace

namespace detail {
device_runtime_registrar::device_runtime_registrar(device_kind kind, runtime_getter get) { runtimes()[kind] = get; }
}  // namespace detail

device_runtime* find_device_runtime(device_kind kind) {
  // The cuda module registers the CUDA runtime when it loads.
  if (kind == device_kind::cuda && !runtimes().count(kind)) detail::load_backend_module("cuda");
  const auto it = runtimes().find(kind);
  return it == runtimes().end() ? nullptr : &it->second();
}

std::size_t storage_span_bytes(const tensor& t) {
  for (const std::int64_t stride : t.strides())
    if (stride < 0) throw error("device copies need non-negative strides");
  return t.span_bytes();
}

void* device_mirror::upload(const tensor& t) {
  const std::size_t bytes = storage_span_bytes(t);
  void* p = rt_->allocate(bytes == 0 ? 1 : bytes);
  blocks_.push_back(p);
  if (bytes) rt_->copy_to_device(p, t.data(), bytes);
  return p;
}

void device_mirror::download(const void* device_data, tensor& t) {
  if (const std::size_t bytes = storage_span_bytes(t)) rt_->copy_to_host(t.data(), device_data, bytes);
}

void device_mirror::clear() noexcept {
  for (void* p : blocks_) rt_->deallocate(p);
  blocks_.clear();
}

}  // namespace opval
