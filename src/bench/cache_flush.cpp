#include "opval/cache_flush.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>

namespace opval {
namespace {

/// "32768K", "2M", "512" as sysfs writes cache sizes, in bytes; 0 when unreadable.
std::size_t parse_size(const std::string& text) {
  std::size_t value = 0, i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) value = value * 10 + static_cast<std::size_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  return value;
}

constexpr std::size_t line_bytes = 64;

}  // namespace

std::size_t last_level_cache_bytes() {
  std::size_t largest = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    std::ifstream size_file(entry.path() / "size");
    std::string text;
    if (size_file >> text) largest = std::max(largest, parse_size(text));
  }
  return largest;
}

cache_flusher::cache_flusher(std::size_t bytes) {
  if (bytes == 0) {
    const std::size_t llc = last_level_cache_bytes();
    bytes = llc ? 2 * llc : std::size_t{64} << 20;
  }
  buffer_.assign(std::max(bytes, line_bytes), 0);
}

void cache_flusher::flush() {
  // A read-modify-write per line: the line comes in, dirty, and pushes older lines out.
  volatile unsigned char* p = buffer_.data();
  for (std::size_t i = 0; i < buffer_.size(); i += line_bytes) p[i] = static_cast<unsigned char>(p[i] + 1);
}

}  // namespace opval
