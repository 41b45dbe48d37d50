#pragma once
// This CPU's instruction-set extensions as the kernel names them in /proc/cpuinfo: which
// kernels a library dispatches to, and so which of its known failures apply here (a u8 x s8
// GEMM saturates without VNNI; oneDNN 2.6 runs bf16 only from AVX-512 on).
#include <string>
#include <string_view>
#include <vector>

namespace opval {

/// The value of the first "key : value" line of /proc/cpuinfo whose key is `key` ("" if none).
std::string cpuinfo_value(const std::string& key);

/// The flags among `all` (words of /proc/cpuinfo's "flags" or "Features") that decide which
/// kernels a library picks: SIMD, matrix and conversion units.
std::vector<std::string> vector_flags(const std::string& all);

/// This CPU's vector flags (vector_flags of /proc/cpuinfo), read once.
const std::vector<std::string>& cpu_vector_flags();

/// True when `flag` is one of the vector flags Linux names (avx2, avx512_vnni, amx_bf16, sve,
/// ...): a condition on a flag outside that list is a typo that would never hold.
bool is_known_vector_flag(std::string_view flag);

/// Every flag is_known_vector_flag accepts, space-separated, for error messages.
std::string known_vector_flags();

}  // namespace opval
