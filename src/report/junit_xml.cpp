// The JUnit XML document (report/junit_xml.hpp).
#include "report/junit_xml.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace opval {
namespace {

constexpr const char* replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// Bytes of the UTF-8 sequence starting at s[i] when it is well formed, else 0.
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

std::string iso_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  ::localtime_r(&t, &local);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  char zone[8];
  std::strftime(zone, sizeof zone, "%z", &local);  // +0100: pytest writes +01:00
  const std::string z = zone;
  return fmt::format("{}.{:06}{}", text, micros, z.size() == 5 ? z.substr(0, 3) + ":" + z.substr(3) : z);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

const char* element_of(junit_case::outcome o) {
  switch (o) {
    case junit_case::outcome::failure: return "failure";
    case junit_case::outcome::error: return "error";
    case junit_case::outcome::skipped: return "skipped";
    case junit_case::outcome::passed: break;
  }
  return "";
}

void write_properties(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& properties,
                      const char* indent) {
  if (properties.empty()) return;
  fmt::print(out, "{}<properties>", indent);
  for (const auto& [name, value] : properties)
    fmt::print(out, "<property name=\"{}\" value=\"{}\"/>", xml_escape(name), xml_escape(value));
  fmt::print(out, "</properties>\n");
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += replacement;
      ++i;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.append(text, i, n);
    }
    i += n;
  }
  return out;
}

void junit_document::write(std::ostream& out, double seconds) const {
  int failures = 0, errors = 0, skipped = 0;
  for (const junit_case& c : cases_) {
    failures += c.result == junit_case::outcome::failure;
    errors += c.result == junit_case::outcome::error;
    skipped += c.result == junit_case::outcome::skipped;
  }
  fmt::print(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites name=\"{}\">\n", xml_escape(suite_));
  fmt::print(out,
             "<testsuite name=\"{}\" errors=\"{}\" failures=\"{}\" skipped=\"{}\" tests=\"{}\" time=\"{:.3f}\" "
             "timestamp=\"{}\" hostname=\"{}\">\n",
             xml_escape(suite_), errors, failures, skipped, cases_.size(), seconds, iso_timestamp(),
             xml_escape(host_name()));
  write_properties(out, properties_, "");
  for (const junit_case& c : cases_) {
    fmt::print(out, "<testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"{}", xml_escape(c.classname),
               xml_escape(c.name), c.seconds, c.file.empty() ? "" : " file=\"" + xml_escape(c.file) + "\"");
    if (c.result == junit_case::outcome::passed && c.properties.empty()) {
      fmt::print(out, "/>\n");
      continue;
    }
    fmt::print(out, ">\n");
    write_properties(out, c.properties, "  ");
    if (c.result != junit_case::outcome::passed)
      fmt::print(out, "  <{0} type=\"{1}\" message=\"{2}\">{3}</{0}>\n", element_of(c.result), xml_escape(c.type),
                 xml_escape(c.message), xml_escape(c.text));
    fmt::print(out, "</testcase>\n");
  }
  fmt::print(out, "</testsuite>\n</testsuites>\n");
}

}  // namespace opval
