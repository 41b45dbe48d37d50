// Replays every input of the fuzz corpora and of the fuzz regressions (tests/fuzz/corpus/<target>/,
// tests/fuzz/regressions/<target>/: each crash a fuzz run found, kept after its fix) through
// the bodies of the fuzz targets, in the ordinary build: bad input must end in an
// opval::error, never in a crash or another exception.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../fuzz/fuzz_targets.hpp"

namespace opval {
namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs `body` over every file under tests/fuzz/<kind>/<target>/; returns how many.
int replay(const std::string& kind, const std::string& target,
           const std::function<void(std::span<const std::uint8_t>)>& body) {
  const fs::path dir = fs::path(OPVAL_SOURCE_DIR) / "tests/fuzz" / kind / target;
  int n = 0;
  if (!fs::is_directory(dir)) return n;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    const std::vector<std::uint8_t> data = bytes_of(e.path());
    EXPECT_NO_THROW(body(data)) << e.path();
    ++n;
  }
  return n;
}

TEST(FuzzRegressions, Descriptor) {
  EXPECT_GT(replay("corpus", "descriptor", fuzz::descriptor), 0);
  replay("regressions", "descriptor", fuzz::descriptor);
}

TEST(FuzzRegressions, BatchFile) {
  EXPECT_GT(replay("corpus", "batch_file", fuzz::batch_file), 0);
  replay("regressions", "batch_file", fuzz::batch_file);
}

TEST(FuzzRegressions, PluginMetadata) {
  EXPECT_GT(replay("corpus", "plugin_metadata", fuzz::plugin_metadata), 0);
  replay("regressions", "plugin_metadata", fuzz::plugin_metadata);
}

TEST(FuzzRegressions, ArrayFile) {
  EXPECT_GT(replay("corpus", "array_file", fuzz::array_file), 0);
  replay("regressions", "array_file", fuzz::array_file);
}

TEST(FuzzRegressions, OnnxModel) {
  EXPECT_GT(replay("corpus", "onnx_model", fuzz::onnx_model), 0);
  replay("regressions", "onnx_model", fuzz::onnx_model);
}

/// The fake plugin's answers reach the loader's checks: each bad answer is an opval::error.
detail::plugin_entry_points fake_entry_points() {
  detail::plugin_entry_points f;
  f.abi_version = fuzz::fake_abi;
  f.name = fuzz::fake_name;
  f.supports = fuzz::fake_supports;
  f.execute = fuzz::fake_execute;
  return f;
}

TEST(PluginMetadata, WrongAbiVersionIsRefused) {
  fuzz::fake_plugin() = {};
  fuzz::fake_plugin().abi = OPVAL_PLUGIN_ABI_VERSION + 1;
  fuzz::fake_plugin().name = "x";
  EXPECT_THROW(detail::make_plugin_backend(fake_entry_points(), "p.so"), error);
}

TEST(PluginMetadata, NameThatIsNoWordIsRefusedAndShownPrintable) {
  for (std::string name : {std::string(), std::string("two words"), std::string("a\nb"), std::string(65, 'n'),
                           std::string("a,b")}) {
    fuzz::fake_plugin() = {};
    fuzz::fake_plugin().name = name;
    try {
      detail::make_plugin_backend(fake_entry_points(), "p.so");
      ADD_FAILURE() << "accepted the name '" << name << "'";
    } catch (const error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("opval_plugin_name()"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(PluginMetadata, NullNameIsRefused) {
  fuzz::fake_plugin() = {};
  fuzz::fake_plugin().null_name = true;
  try {
    detail::make_plugin_backend(fake_entry_points(), "p.so");
    ADD_FAILURE() << "accepted a NULL name";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("opval_plugin_name() returned NULL"), std::string::npos) << e.what();
  }
}

TEST(PluginMetadata, UndefinedSupportsCodeIsAPluginErrorNamingTheCodeNotASkip) {
  for (const int code : {3, -1, 100}) {
    fuzz::fake_plugin() = {};
    fuzz::fake_plugin().name = "fake";
    fuzz::fake_plugin().supports_code = code;
    const auto b = detail::make_plugin_backend(fake_entry_points(), "p.so");
    run_options o;
    o.perturb_check = false;
    const case_result r = run_case(parse_problem("matmul m=2 n=3 k=2"), *b, o, "test");
    EXPECT_EQ(r.v.st, state::failed) << code;
    EXPECT_NE(r.v.reason.find("opval_plugin_supports() returned " + std::to_string(code) + ","), std::string::npos)
        << r.v.reason;
  }
}

TEST(PluginMetadata, UnterminatedMultiLineReasonIsOneBoundedLine) {
  fuzz::fake_plugin() = {};
  fuzz::fake_plugin().name = "fake";
  fuzz::fake_plugin().supports_code = OPVAL_PLUGIN_UNIMPLEMENTED;
  fuzz::fake_plugin().reason = "no\nkernel\r" + std::string(2000, 'r');
  const auto b = detail::make_plugin_backend(fake_entry_points(), "p.so");
  const support s = b->supports(parse_problem("matmul m=2 n=3 k=2"));
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason.size(), 1024u);
  EXPECT_EQ(s.reason.find_first_of("\r\n"), std::string::npos) << s.reason.substr(0, 20);
}

}  // namespace
}  // namespace opval
