// Reading benchmark files (bench/bench_records.hpp).
#include "bench/bench_records.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/environment.hpp"
#include "bench/sample_summary.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

/// What a record says makes its figure depend on when it was taken: the run's load warning
/// (its environment's) and the case's own noise warnings.
std::vector<std::string> recorded_warnings(const nlohmann::ordered_json& record) {
  std::vector<std::string> out;
  if (const auto env = record.find("environment"); env != record.end() && env->is_object())
    for (const std::string& w : env->value("warnings", std::vector<std::string>{}))
      if (is_load_warning(w)) out.push_back(w);
  for (const std::string& w : record.at("timing").value("warnings", std::vector<std::string>{})) out.push_back("noise: " + w);
  return out;
}

// The figures the report draws; written by every opval bench, so a hand-made file may lack them.
void read_report_figures(const nlohmann::ordered_json& j, bench_record& r) {
  r.contract = j.value("contract", "");
  if (const auto counts = j.find("counts"); counts != j.end() && counts->is_object())
    r.flops = counts->value("flops", 0.0), r.bytes = counts->value("bytes", 0.0);
  if (const auto sweep = j.find("sweep"); sweep != j.end() && sweep->is_object())
    for (const auto& [axis, value] : sweep->items())
      r.sweep.emplace_back(axis, value.is_string() ? value.get<std::string>() : value.dump());
  if (const auto check = j.find("check"); check != j.end() && check->is_object()) r.check = check->dump();
  if (!r.timed) return;
  const nlohmann::ordered_json& t = j.at("timing");
  r.gbytes_per_second = t.value("gbytes_per_second", 0.0);
  r.intensity = t.value("intensity", 0.0);
  if (const auto threads = t.find("threads"); threads != t.end() && !threads->is_null())
    r.threads = threads->is_string() ? threads->get<std::string>() : threads->dump();
  if (const auto roof = t.find("roofline"); roof != t.end() && roof->is_object())
    r.roofline = bench_roof{roof->value("peak_type", ""), roof->value("memory_level", ""), roof->value("bound", ""),
                            roof->value("peak_gflops", 0.0), roof->value("bandwidth_gbs", 0.0),
                            roof->value("percent_of_roof", 0.0)};
}

bench_record parse_bench_record(const std::string& line) {
  // In the file's order: a sweep's axes keep theirs.
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
  if (j.value("schema", "") != "opval-bench") throw error("not an `opval bench` record (an `opval run` journal?)");
  bench_record r;
  r.descriptor = j.at("descriptor").get<std::string>();
  r.op = j.value("op", "");
  r.backend = j.at("backend").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.state = j.at("state").get<std::string>();
  r.timed = j.at("timed").get<bool>();
  if (r.timed) {
    const nlohmann::ordered_json& t = j.at("timing");
    r.values = t.at("values").get<std::vector<double>>();
    r.repetition_medians = t.value("repetition_medians", std::vector<double>{});
    r.warnings = recorded_warnings(j);
    // Written by every opval bench; a hand-made file may give only the values.
    r.median = t.contains("median") ? t.at("median").get<double>() : r.values.empty() ? 0.0 : median_of(r.values);
    r.ci_low = t.value("ci_low", r.median);
    r.ci_high = t.value("ci_high", r.median);
    r.gflops = t.value("gflops", 0.0);
  }
  read_report_figures(j, r);
  return r;
}

}  // namespace

std::string bench_record::key() const { return fmt::format("{}\n{}\n{}", descriptor, backend, seed); }

std::vector<bench_record> read_bench_records(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error(fmt::format("cannot read benchmark file '{}'", path));
  return read_bench_records(in, path);
}

std::vector<bench_record> read_bench_records(std::istream& in, const std::string& path) {
  std::vector<bench_record> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (blank(line)) continue;
    try {
      out.push_back(parse_bench_record(line));
    } catch (const std::exception& e) {
      throw error(fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  return out;
}

bool is_bench_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error(fmt::format("cannot read '{}'", path));
  std::string line;
  while (std::getline(in, line))
    if (!blank(line)) return line.find(R"("schema":"opval-bench")") != std::string::npos;
  return false;
}

}  // namespace opval
