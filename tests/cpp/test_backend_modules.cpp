// Backend modules (src/core/backend_modules.hpp) as a user meets them through the CLI: a module
// that cannot be loaded (a corrupt file) leaves its backend unavailable with the loader's
// reason, in `opval list backends` and as one error line when asked for; a module that crashes
// while loading takes down the worker that loads it, never opval: the listing names it as
// unavailable and goes on, a run on it is one error line; a run loads only the module of the
// backend it names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_testing.hpp"

namespace {

namespace fs = std::filesystem;
using opval::testing::cli_result;
using opval::testing::run_cli;

/// OPVAL_BACKENDS_PATH set to `dir` for the scope.
struct backends_path {
  explicit backends_path(const fs::path& dir) { ::setenv("OPVAL_BACKENDS_PATH", dir.c_str(), 1); }
  ~backends_path() { ::unsetenv("OPVAL_BACKENDS_PATH"); }
};

class BackendModules : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opval_modules_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  cli_result opval(const std::vector<std::string>& args) { return run_cli(OPVAL_CLI_PATH, dir_, args); }
  fs::path dir_;
};

TEST_F(BackendModules, CorruptModuleLeavesItsBackendUnavailable) {
  std::ofstream(dir_ / "libopval_backend_broken.so") << "not an ELF file\n";
  backends_path path(dir_);
  const cli_result list = opval({"list", "backends"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("broken           unavailable: module"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("could not be loaded"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("sim "), std::string::npos) << "the other backends are still listed: " << list.out;
  const cli_result run = opval({"run", "--problems", "matmul m=4 n=4 k=4", "--backend", "broken"});
  EXPECT_EQ(run.code, 2);
  ASSERT_EQ(run.err_lines().size(), 1u) << run.err;
  EXPECT_NE(run.err.find("backend 'broken' is unavailable: its module"), std::string::npos) << run.err;
  // The other backends still run.
  EXPECT_EQ(opval({"run", "--problems", "matmul m=4 n=4 k=4", "--backend", "sim"}).code, 0);
}

TEST_F(BackendModules, ModuleCrashingWhileLoadedTakesDownOnlyTheWorker) {
  backends_path path(OPVAL_CRASHING_MODULE_DIR);
  // The listing goes on: the module that took its worker down is unavailable, with the reason.
  const cli_result list = opval({"list", "backends"});
  EXPECT_EQ(list.code, 0) << list.out << list.err;
  EXPECT_NE(list.out.find("crashing         unavailable: module "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("libopval_backend_crashing.so took down its worker: worker killed by SIGABRT"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("sim "), std::string::npos) << list.out;
  // A run loads the module of the backend it asks for, no other: sim needs none.
  const cli_result sim = opval({"run", "--problems", "matmul m=4 n=4 k=4", "--backend", "sim"});
  EXPECT_EQ(sim.code, 0) << sim.out << sim.err;
  const cli_result run = opval({"run", "--problems", "matmul m=4 n=4 k=4", "--backend", "crashing"});
  EXPECT_EQ(run.code, 2) << run.out;
  ASSERT_EQ(run.err_lines().size(), 1u) << run.err;
  EXPECT_NE(run.err.find("backend 'crashing' could not be loaded"), std::string::npos) << run.err;
}

// A module cannot replace a backend registered before it: the first registration wins.
TEST_F(BackendModules, AModuleCannotReplaceSim) {
  backends_path path(OPVAL_IMPOSTOR_MODULE_DIR);
  const cli_result list = opval({"list", "backends"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("impostor         impostor 0"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("sim              impostor"), std::string::npos) << list.out;
  EXPECT_EQ(opval({"run", "--problems", "relu shape=4", "--backend", "sim"}).code, 0);
  const cli_result run = opval({"run", "--problems", "relu shape=4", "--backend", "impostor"});
  EXPECT_NE(run.out.find("UNIMPLEMENTED"), std::string::npos) << run.out << run.err;
}

}  // namespace
