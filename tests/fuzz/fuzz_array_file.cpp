// libFuzzer target: opval::fuzz::array_file (tests/fuzz/fuzz_targets.hpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  opval::fuzz::array_file({data, size});
  return 0;
}
