// A plugin that crashes, hangs or exits while opval loads it (in a constructor, or in its
// opval_plugin_abi_version, _name or _device), under process isolation: opval survives each
// with one error line naming the plugin and exit code 2, within the --timeout; the parent never
// runs the plugin's code. A plugin that prints lines looking like worker answers on stdout
// while loading cannot corrupt the protocol. `opval list backends` asks a worker too.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "cli_testing.hpp"

namespace opval {
namespace {

const std::map<std::string, std::string>& plugins() {
  static const std::map<std::string, std::string> paths{
      {"constructor_crash", OPVAL_BROKEN_LOAD_CONSTRUCTOR_CRASH}, {"constructor_hang", OPVAL_BROKEN_LOAD_CONSTRUCTOR_HANG},
      {"constructor_exit", OPVAL_BROKEN_LOAD_CONSTRUCTOR_EXIT},   {"abi_version_crash", OPVAL_BROKEN_LOAD_ABI_VERSION_CRASH},
      {"abi_version_hang", OPVAL_BROKEN_LOAD_ABI_VERSION_HANG},   {"abi_version_exit", OPVAL_BROKEN_LOAD_ABI_VERSION_EXIT},
      {"name_crash", OPVAL_BROKEN_LOAD_NAME_CRASH},               {"name_hang", OPVAL_BROKEN_LOAD_NAME_HANG},
      {"name_exit", OPVAL_BROKEN_LOAD_NAME_EXIT},                 {"device_crash", OPVAL_BROKEN_LOAD_DEVICE_CRASH},
      {"device_hang", OPVAL_BROKEN_LOAD_DEVICE_HANG},             {"device_exit", OPVAL_BROKEN_LOAD_DEVICE_EXIT},
      {"constructor_print", OPVAL_BROKEN_LOAD_CONSTRUCTOR_PRINT}, {"abi_version_print", OPVAL_BROKEN_LOAD_ABI_VERSION_PRINT},
      {"name_print", OPVAL_BROKEN_LOAD_NAME_PRINT},               {"device_print", OPVAL_BROKEN_LOAD_DEVICE_PRINT}};
  return paths;
}

testing::cli_result run_with(const std::string& plugin, const std::vector<std::string>& command) {
  std::vector<std::string> args = command;
  for (const char* a : {"--plugin", "", "--problems", "matmul m=4 n=4 k=4", "--timeout", "2"}) args.emplace_back(a);
  args[command.size() + 1] = plugins().at(plugin);
  return testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(), args);
}

class PluginLoading : public ::testing::TestWithParam<std::string> {};

TEST_P(PluginLoading, OpvalSurvivesWithOneErrorLineNamingThePlugin) {
  const std::string& kind = GetParam();
  for (const std::vector<std::string>& command : {std::vector<std::string>{"run"}, {"repro", "matmul m=4 n=4 k=4"},
                                                   {"bench", "--budget", "0.1"}}) {
    const auto start = std::chrono::steady_clock::now();
    const testing::cli_result r =
        command[0] == "repro" ? testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
                                                 {"repro", "matmul m=4 n=4 k=4", "--plugin", plugins().at(kind),
                                                  "--timeout", "2"})
                              : run_with(kind, command);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    SCOPED_TRACE(command[0] + " " + kind + "\nstdout: " + r.out + "\nstderr: " + r.err);
    EXPECT_EQ(r.code, 2);
    ASSERT_EQ(r.err_lines().size(), 1u);
    const std::string line = r.err_lines()[0];
    EXPECT_NE(line.find("plugin '" + plugins().at(kind) + "'"), std::string::npos);
    if (kind.ends_with("crash")) EXPECT_NE(line.find("worker killed by SIGSEGV"), std::string::npos);
    if (kind.ends_with("exit")) EXPECT_NE(line.find("worker exited with status 7 while loading it"), std::string::npos);
    if (kind.ends_with("hang")) EXPECT_NE(line.find("did not finish loading within 2 s"), std::string::npos);
    EXPECT_LT(seconds, 30);
  }
}

INSTANTIATE_TEST_SUITE_P(EachPlaceAndFault, PluginLoading,
                         ::testing::Values("constructor_crash", "constructor_hang", "constructor_exit",
                                           "abi_version_crash", "abi_version_hang", "abi_version_exit", "name_crash",
                                           "name_hang", "name_exit", "device_crash", "device_hang", "device_exit"));

TEST(PluginLoading, WhatAPluginPrintsWhileLoadingCannotCorruptTheProtocol) {
  for (const char* kind : {"constructor_print", "abi_version_print", "name_print", "device_print"}) {
    const testing::cli_result r = run_with(kind, {"run"});
    SCOPED_TRACE(std::string(kind) + "\nstdout: " + r.out + "\nstderr: " + r.err);
    EXPECT_EQ(r.code, 1);  // its one case is UNIMPLEMENTED: no case ran
    EXPECT_NE(r.out.find("broken_loading runs nothing"), std::string::npos);
    EXPECT_EQ(r.out.find("impostor"), std::string::npos);
    EXPECT_NE(r.out.find("0 passed, 0 failed, 1 skipped"), std::string::npos);
  }
}

TEST(PluginLoading, WithoutIsolationTheParentLoadsItAndIsNotProtected) {
  // Documented (docs/SAFETY.md): --isolation none runs the plugin's loading in opval itself.
  const testing::cli_result r = testing::run_cli(
      OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
      {"run", "--plugin", plugins().at("constructor_exit"), "--problems", "matmul m=4 n=4 k=4", "--isolation", "none"});
  EXPECT_EQ(r.code, 7);
}

TEST(PluginLoading, ListBackendsMakesEachInAWorker) {
  const testing::cli_result r = testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(), {"list", "backends"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sim "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace opval
