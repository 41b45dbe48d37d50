// Golden records (tests/golden/README.md): `opval run` on a fixed sample of problems gives the
// same records as when the golden files were written, so that a change meant to alter no
// verdict (a refactoring of the session, the runner or the reporters) is proven to alter
// none, and a change that alters inputs, metrics or verdicts on purpose says so by rewriting
// the files in the same commit (OPVAL_UPDATE_GOLDEN=1). Compared: every field of the sim
// backend's records and of two buggy example plugins' (fills, reference, kernel, metrics,
// worst elements, bias test, verdict, reason, repro), less timings, memory and the build
// identity; and the verdict state of each library backend (oneDNN, OpenBLAS, OpenCL), whose
// numbers depend on the library's version and the CPU's instruction set (one file per oneDNN ISA).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_testing.hpp"

#ifndef OPVAL_CLI_PATH
#error "tests/cpp/CMakeLists.txt must define OPVAL_CLI_PATH for test_golden_records"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path golden_dir = fs::path(OPVAL_SOURCE_DIR) / "tests/golden";

bool updating() {
  const char* v = std::getenv("OPVAL_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// `text` with every `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// Every string in `j` with the checkout's and the build's folders named as $SOURCE and
// $PLUGINS: the sample's path (in `source`) and a plugin's (in `repro`) differ by checkout.
void name_folders(json& j) {
  static const std::string plugins = fs::path(OPVAL_SGEMM_TILED_BUGGY).parent_path().string();
  if (j.is_string()) {
    j = replaced(replaced(j.get<std::string>(), plugins, "$PLUGINS"), OPVAL_SOURCE_DIR, "$SOURCE");
  } else if (j.is_structured()) {
    for (auto& item : j) name_folders(item);
  }
}

// A record without what legitimately differs from run to run, build to build and checkout
// to checkout.
json normalized(json record) {
  for (const char* key : {"timings", "memory", "opval", "backend_version"}) record.erase(key);
  name_folders(record);
  return record;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// Where `now` differs from `golden`, as JSON pointers with both values. Numbers agree within a
// relative 1e-12: the summary statistics (mean errors, cosine similarity) are sums whose order
// the compiler's vectorization picks, so a Release and an ASan build differ in their last bits;
// a change of inputs, reference, bound or verdict moves them far more. The bias test's z
// scores agree when both are beyond 1000 with one sign: where every rounding error is the same
// (a constant output) its variance is rounding noise, and z an arbitrary huge number. A mean
// signed error agrees within 1e-12 of the mean absolute error beside it: where the errors
// cancel (a row divided by its own sum sums to one) it is rounding noise at that size.
bool signed_mean_agrees(const json& golden, const json& now) {
  if (!golden.contains("mean_signed_error") || !golden.contains("mean_abs_error") || !now.contains("mean_signed_error"))
    return false;
  const json &a = golden.at("mean_signed_error"), &b = now.at("mean_signed_error");
  if (!a.is_number() || !b.is_number()) return false;
  return std::abs(a.get<double>() - b.get<double>()) <= 1e-12 * std::abs(golden.at("mean_abs_error").get<double>());
}

void collect_differences(const json& golden, const json& now, const std::string& path, std::vector<std::string>& out) {
  if (golden.is_number() && now.is_number()) {
    const double a = golden.get<double>(), b = now.get<double>();
    if (a == b || std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b))) return;
    if (ends_with(path, "_z") && std::min(std::abs(a), std::abs(b)) > 1e3 && (a > 0) == (b > 0)) return;
  } else if (golden.is_object() && now.is_object()) {
    const bool signed_mean_ok = signed_mean_agrees(golden, now);
    for (const auto& [key, value] : golden.items())
      if (!(key == "mean_signed_error" && signed_mean_ok))
        collect_differences(value, now.contains(key) ? now.at(key) : json(), path + "/" + key, out);
    for (const auto& [key, value] : now.items())
      if (!golden.contains(key)) collect_differences(json(), value, path + "/" + key, out);
    return;
  } else if (golden.is_array() && now.is_array() && golden.size() == now.size()) {
    for (std::size_t i = 0; i < golden.size(); ++i)
      collect_differences(golden[i], now[i], path + "/" + std::to_string(i), out);
    return;
  } else if (golden == now) {
    return;
  }
  out.push_back(path + ": " + golden.dump() + " -> " + now.dump());
}

// The key a record is matched by: backend and descriptor (each sample descriptor once).
std::string key_of(const json& record) {
  return record.at("backend").get<std::string>() + " | " + record.at("descriptor").get<std::string>();
}

std::vector<json> read_jsonl(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

class GoldenRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opval_golden_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The records of `opval run --problems tests/golden/sample.txt` with `args`, in run order.
  std::vector<json> run(const std::vector<std::string>& args) {
    const fs::path out = dir_ / "records.jsonl";
    std::vector<std::string> all = {"run", "--problems", (golden_dir / "sample.txt").string(), "--jsonl",
                                    out.string()};
    all.insert(all.end(), args.begin(), args.end());
    const opval::testing::cli_result r = opval::testing::run_cli(OPVAL_CLI_PATH, dir_, all);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << "opval run exited " << r.code << ":\n" << r.err;
    return read_jsonl(out);
  }

  // Compares `records` (normalized) with the golden file `name`, or rewrites it when updating.
  void expect_golden(const std::string& name, const std::vector<json>& records) {
    const fs::path file = golden_dir / name;
    if (updating()) {
      std::ofstream out(file);
      for (const json& r : records) out << normalized(r).dump() << "\n";
      std::printf("rewrote %s (%zu records)\n", file.c_str(), records.size());
      return;
    }
    std::map<std::string, json> golden;
    for (json& g : read_jsonl(file)) golden.emplace(key_of(g), std::move(g));
    ASSERT_FALSE(golden.empty()) << file << " is missing or empty (OPVAL_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(records.size(), golden.size()) << "records in this run vs in " << name;
    int differing = 0;
    for (const json& r : records) {
      const auto it = golden.find(key_of(r));
      if (it == golden.end()) {
        ADD_FAILURE() << key_of(r) << ": not in " << name;
        continue;
      }
      std::vector<std::string> found;
      collect_differences(it->second, normalized(r), "", found);
      if (found.empty() || ++differing > 5) continue;
      std::string listed;
      for (std::size_t i = 0; i < found.size() && i < 10; ++i) listed += "  " + found[i].substr(0, 300) + "\n";
      ADD_FAILURE() << key_of(r) << " differs from " << name << " (golden -> now):\n" << listed;
    }
    EXPECT_EQ(differing, 0) << differing << " of " << records.size() << " records differ from " << name
                            << "; a change that alters them on purpose rewrites the file with OPVAL_UPDATE_GOLDEN=1 "
                               "(tests/golden/README.md) and says why in its commit";
  }

  fs::path dir_;
};

TEST_F(GoldenRecords, sim_records_are_unchanged) {
  expect_golden("sim.jsonl", run({"--backend", "sim"}));
}

TEST_F(GoldenRecords, buggy_plugin_records_are_unchanged) {
  std::vector<json> records = run({"--plugin", OPVAL_SGEMM_TILED_BUGGY});
  const std::vector<json> attention = run({"--plugin", OPVAL_FLASH_ATTENTION_BUGGY});
  records.insert(records.end(), attention.begin(), attention.end());
  int failed = 0;
  for (const json& r : records) failed += r.at("state") == "FAILED";
  EXPECT_GT(failed, 0) << "the sample has no problem on which the buggy plugins fail";
  expect_golden("plugins.jsonl", records);
}

// The instruction set oneDNN runs on here, as its version line names it ("..., isa avx2").
std::string onednn_isa(const std::string& backends_listing) {
  const std::string marker = ", isa ";
  const std::size_t line = backends_listing.find("oneDNN ");
  const std::size_t at = line == std::string::npos ? line : backends_listing.find(marker, line);
  if (at == std::string::npos) return "";
  const std::size_t from = at + marker.size();
  return backends_listing.substr(from, backends_listing.find_first_of(" \n", from) - from);
}

// Per library backend, each sample problem's verdict state: their numbers are the library's.
// The states themselves depend on the instruction set oneDNN dispatches to (bf16 runs only
// from avx512_core on; int8 sums saturate before VNNI), so there is one file per oneDNN ISA.
TEST_F(GoldenRecords, library_verdicts_are_unchanged) {
  const std::string listed = opval::testing::run_cli(OPVAL_CLI_PATH, dir_, {"list", "backends"}).out;
  for (const char* b : {"onednn", "openblas", "opencl"})
    if (listed.find(std::string("\n") + b + " ") == std::string::npos && !listed.starts_with(std::string(b) + " "))
      GTEST_SKIP() << "this build has no " << b << " backend";
  const std::string isa = onednn_isa(listed);
  ASSERT_FALSE(isa.empty()) << "oneDNN's version line names no instruction set:\n" << listed;
  const std::string file = "library_states." + isa + ".jsonl";
  if (!updating() && !fs::exists(golden_dir / file))
    GTEST_SKIP() << "no golden library states for oneDNN isa " << isa << " (tests/golden/" << file
                 << "); OPVAL_UPDATE_GOLDEN=1 writes them on such a machine";
  std::vector<json> states;
  for (const json& r : run({"--backend", "onednn,openblas,opencl"}))
    states.push_back({{"backend", r.at("backend")}, {"descriptor", r.at("descriptor")}, {"state", r.at("state")}});
  expect_golden(file, states);
}

}  // namespace
