// libFuzzer target: opval::fuzz::plugin_metadata (tests/fuzz/fuzz_targets.hpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  opval::fuzz::plugin_metadata({data, size});
  return 0;
}
