// libFuzzer target: opval::fuzz::onnx_model (tests/fuzz/fuzz_targets.hpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  opval::fuzz::onnx_model({data, size});
  return 0;
}
