// The CUDA device_runtime: device memory, copies, one stream and event timing on device 0.
#include "backends/cuda/cuda_runtime.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include "opval/error.hpp"

namespace opval::cuda {
namespace {

// "13.0" from CUDA's 1000*major + 10*minor encoding.
std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

class cuda_device_runtime final : public device_runtime {
 public:
  cuda_device_runtime() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      unavailable_ = std::string("CUDA: no device: ") + cudaGetErrorString(e);
      cudaGetLastError();  // clear the sticky-free error so later calls report their own
      return;
    }
    if (count == 0) {
      unavailable_ = "CUDA: no device: cudaGetDeviceCount found none";
      return;
    }
    try {
      check(cudaSetDevice(0), "cudaSetDevice(0)");
      cudaDeviceProp prop{};
      check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      check(cudaEventCreate(&start_), "cudaEventCreate");
      check(cudaEventCreate(&stop_), "cudaEventCreate");
      device_ = std::string(prop.name) + " sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    } catch (const error& ex) {
      unavailable_ = ex.what();
    }
  }

  std::string description() const override {
    return runtime_versions() + ", " + (unavailable_.empty() ? "device " + device_ : unavailable_);
  }
  std::string unavailable_reason() const override { return unavailable_; }

  void* allocate(std::size_t bytes) override {
    require();
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
    return p;
  }
  void deallocate(void* p) noexcept override {
    if (p) cudaFree(p);
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    require();
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (host to device)");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    require();
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (device to host)");
  }
  void* stream() override { return stream_; }
  void synchronize() override {
    require();
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (a kernel or copy on the stream failed)");
  }
  void timer_start() override {
    require();
    check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    timed_ = false;
  }
  void timer_stop() override {
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    timed_ = true;
  }
  std::optional<double> elapsed_seconds() override {
    if (!timed_) return std::nullopt;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, start_, stop_) != cudaSuccess) return std::nullopt;
    return ms * 1e-3;
  }

 private:
  void require() const {
    if (!unavailable_.empty()) throw error(unavailable_);
  }

  std::string unavailable_, device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  bool timed_ = false;
};

device_runtime& the_runtime() {
  static auto* rt = new cuda_device_runtime;
  return *rt;
}

const detail::device_runtime_registrar registrar{device_kind::cuda, &the_runtime};

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

device_runtime& runtime() { return the_runtime(); }

cudaStream_t stream() { return static_cast<cudaStream_t>(runtime().stream()); }

std::string runtime_versions() {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  return "CUDA runtime " + version_text(rt) + ", driver " + (drv ? version_text(drv) : std::string("none"));
}

}  // namespace opval::cuda
