#pragma once
// Device memory and queues behind a small interface, so that core code (the plugin backend)
// can move tensors to an accelerator without depending on its runtime: a build without CUDA
// simply has no runtime registered for device_kind::cuda.
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "opval/tensor.hpp"

namespace opval {

/// Where tensor data lives; the values equal plugin.h's opval_device_kind.
enum class device_kind : int { cpu = 0, cuda = 1 };

/// One device's memory, copies and work queue (CUDA: the current device and one stream).
/// Copies are queued on the stream; synchronize() waits for everything queued.
class device_runtime {
 public:
  virtual ~device_runtime() = default;
  /// A short description: runtime and driver versions, device name, compute capability.
  virtual std::string description() const = 0;
  /// Empty when the device can be used; otherwise why not, in the runtime's own words.
  virtual std::string unavailable_reason() const = 0;
  /// Device memory of at least `bytes` bytes (256-byte aligned); throws opval::error.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  /// Queues a host-to-device copy on the stream.
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  /// Queues a device-to-host copy on the stream (complete after synchronize()).
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// The native queue handle (a cudaStream_t), as plugins receive it.
  virtual void* stream() = 0;
  /// Waits for all work queued on the stream; throws opval::error with the runtime's
  /// message if any of it failed.
  virtual void synchronize() = 0;
  /// Marks the start of the work to time on the stream (a CUDA event).
  virtual void timer_start() = 0;
  /// Marks its end; the seconds between both marks are elapsed_seconds() after synchronize().
  virtual void timer_stop() = 0;
  /// Device-measured seconds between timer_start and timer_stop (call after synchronize).
  virtual std::optional<double> elapsed_seconds() = 0;
};

/// The runtime of `kind`, or null when this build has none (always null for cpu).
device_runtime* find_device_runtime(device_kind kind);

/// Device copies of host tensors, freed together. Each copy spans the tensor's storage from
/// element 0 to its last element, padding included, so strides stay valid on the device and
/// elements a kernel does not write (padding) come back unchanged.
class device_mirror {
 public:
  explicit device_mirror(device_runtime& rt) : rt_(&rt) {}
  ~device_mirror() { clear(); }
  device_mirror(const device_mirror&) = delete;
  device_mirror& operator=(const device_mirror&) = delete;

  /// Allocates device memory for t, queues its upload; returns element 0's device address.
  void* upload(const tensor& t);
  /// Queues the download of the copy at `device_data` (an upload's result) into t.
  void download(const void* device_data, tensor& t);
  /// Frees every copy (after the work using them is complete).
  void clear() noexcept;

 private:
  device_runtime* rt_;
  std::vector<void*> blocks_;
};

/// Bytes from element 0 to the end of the last element of t (0 for an empty tensor).
std::size_t storage_span_bytes(const tensor& t);

namespace detail {
/// Registers a device runtime (one per kind); the backend that provides it does so at load.
struct device_runtime_registrar {
  device_runtime_registrar(device_kind kind, device_runtime& (*get)());
};
}  // namespace detail

}  // namespace opval
