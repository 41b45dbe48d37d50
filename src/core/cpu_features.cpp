#include "core/cpu_features.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace opval {
namespace {

// Linux's names (arch/x86/include/asm/cpufeatures.h, arch/arm64 hwcaps) of the extensions
// libraries dispatch on.
constexpr std::array<std::string_view, 45> known_flags = {
    "sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c",
    "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi",
    "avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq", "avx512_bf16",
    "avx512_fp16", "avx_vnni", "avx_vnni_int8", "avx_ne_convert", "avx_ifma", "amx_tile",
    "amx_int8", "amx_bf16", "amx_fp16", "amx_complex", "neon", "asimd", "asimdhp", "asimddp",
    "sve", "sve2", "svebf16", "svei8mm", "bf16", "i8mm", "sme", "sme2", "fphp"};

}  // namespace

std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name == key) return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "";
}

std::vector<std::string> vector_flags(const std::string& all) {
  static const std::vector<std::string> prefixes = {"sse", "ssse3", "avx", "fma", "f16c", "amx", "vnni", "bf16", "sve", "neon", "asimd"};
  std::vector<std::string> out;
  std::istringstream words(all);
  for (std::string w; words >> w;)
    if (std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return w.starts_with(p); })) out.push_back(w);
  return out;
}

const std::vector<std::string>& cpu_vector_flags() {
  static const std::vector<std::string> flags = vector_flags(cpuinfo_value("flags") + " " + cpuinfo_value("Features"));
  return flags;
}

bool is_known_vector_flag(std::string_view flag) {
  return std::find(known_flags.begin(), known_flags.end(), flag) != known_flags.end();
}

std::string known_vector_flags() {
  std::string out;
  for (std::string_view f : known_flags) out += (out.empty() ? "" : " ") + std::string(f);
  return out;
}

}  // namespace opval
