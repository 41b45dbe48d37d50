#pragma once
// The bodies of opval's fuzz targets, shared by the libFuzzer executables (tests/fuzz/*.cpp,
// the `fuzz` preset) and by test_fuzz_regressions, which replays every corpus and regression
// input through them in the ordinary build. Each takes arbitrary bytes; bad input must end
// in an opval::error (caught here). Any other exception, a crash or a sanitizer report is a
// bug: libFuzzer reports it and the test fails.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "backends/plugin/plugin_entry_points.hpp"
#include "graph/graph_value.hpp"
#include "opval/error.hpp"
#include "opval/graph.hpp"
#include "opval/judge.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/reporter.hpp"
#include "opval/runner.hpp"

namespace opval::fuzz {

inline std::string_view as_text(std::span<const std::uint8_t> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

/// parse_problem on the bytes; a problem that parses must print to a line that parses back
/// to an equal problem (problem.hpp promises that round trip).
inline void descriptor(std::span<const std::uint8_t> data) {
  problem p;
  try {
    p = parse_problem(as_text(data));
  } catch (const error&) {
    return;
  }
  // What the runner asks of a problem before it allocates anything.
  for (const auto& operands : {p.spec().inputs(p), p.spec().outputs(p)})
    for (const operand& o : operands) (void)o.shape.size();
  (void)p.spec().counts(p);
  const std::string text = p.to_string();
  problem again;
  try {
    again = parse_problem(text);
  } catch (const error& e) {
    throw std::logic_error("'" + text + "' does not parse back: " + e.what());
  }
  if (!(again == p)) throw std::logic_error("'" + text + "' parses back to another problem");
}

/// A scratch file for this process (the batch-file reader takes a path).
inline std::filesystem::path scratch_file() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("opval_fuzz_batch_" + std::to_string(::getpid()) + ".txt");
  return path;
}

/// read_problem_file on the bytes as a batch file (includes resolve as for a user's file).
inline void batch_file(std::span<const std::uint8_t> data) {
  const std::filesystem::path path = scratch_file();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  try {
    for (const located_problem& lp : read_problem_file(path.string())) (void)lp.prob.to_string();
  } catch (const error&) {
  }
  std::filesystem::remove(path);
}

/// read_array_file on the bytes as `opval judge --inputs` reads them: an .npz archive when they
/// start as a zip does ("PK"), an .npy array when as NumPy's magic does, else an ONNX
/// TensorProto .pb; arrays read must bind to an operand of their own shape, or fail with an
/// opval::error.
inline void array_file(std::span<const std::uint8_t> data) {
  const auto starts = [&](std::string_view s) { return as_text(data).starts_with(s); };
  const char* extension = starts("PK") ? ".npz" : starts("\x93NUMPY") ? ".npy" : ".pb";
  const std::filesystem::path path = scratch_file().replace_extension(extension);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  try {
    for (const array_data& a : read_array_file(path.string()))
      if (a.shape.size() <= 8) (void)bind_arrays({{a.name, dtype::f32, a.shape, {}}}, std::span(&a, 1), "input");
  } catch (const error&) {
  }
  std::filesystem::remove(path);
}

// ---------------------------------------------------------------- ONNX models

/// parse_onnx on the bytes; a model that reads is mapped node by node, then run by the fp64
/// graph reference on zero inputs of its declared shapes (symbolic extents as 1) with values
/// capped at 8 MiB, so that a hostile graph (an Expand to 2^40 elements, a Reshape that lies)
/// must end in an opval::error, never a crash, a hang or an allocation that takes the machine.
inline void onnx_model(std::span<const std::uint8_t> data) {
  graph::set_max_value_bytes(std::int64_t{8} << 20);
  graph::model m;
  try {
    m = graph::parse_onnx(std::as_bytes(data), "fuzz.onnx");
  } catch (const error&) {
    return;
  }
  for (const graph::node& n : m.nodes) (void)graph::map_node(m, n);
  std::map<std::string, graph::value, std::less<>> inputs;
  for (const graph::value_info& in : m.inputs) {
    dims shape = in.shape.value_or(dims{});
    for (std::int64_t& d : shape) d = d < 0 ? 1 : d;
    try {
      inputs[in.name] = graph::zeros(in.type.value_or(dtype::f32), shape);
    } catch (const error&) {
      return;
    }
  }
  try {
    (void)graph::run_reference(m, inputs);
  } catch (const error&) {
  }
}

// ---------------------------------------------------------------- plugin metadata

/// Reads the fuzz input as the answers of a fake plugin.
class byte_reader {
 public:
  explicit byte_reader(std::span<const std::uint8_t> d) : d_(d) {}
  std::uint8_t byte() { return at_ < d_.size() ? d_[at_++] : 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return v;
  }
  /// A length byte, then that many bytes (fewer at the end of the input).
  std::string chunk() {
    std::size_t n = std::min<std::size_t>(byte(), d_.size() - at_);
    std::string s(reinterpret_cast<const char*>(d_.data() + at_), n);
    at_ += n;
    return s;
  }
  /// Everything left.
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(d_.data() + at_), d_.size() - at_);
    at_ = d_.size();
    return s;
  }

 private:
  std::span<const std::uint8_t> d_;
  std::size_t at_ = 0;
};

/// What the fake plugin answers: its ABI version, name (possibly null, any bytes), device
/// kind, supports() code and reason (written unterminated when it fills the buffer), and
/// execute()'s code and message.
struct fake_plugin_answers {
  std::uint32_t abi = OPVAL_PLUGIN_ABI_VERSION;
  bool null_name = false, has_device = false;
  std::int32_t device = 0;
  int supports_code = 0, execute_code = 0;
  std::string name, reason, message;
};

inline fake_plugin_answers& fake_plugin() {
  static fake_plugin_answers answers;
  return answers;
}

/// Copies `text` into a plugin's message buffer as a careless plugin would: no NUL when it
/// fills the buffer.
inline void write_message(const std::string& text, char* buf, std::size_t size) {
  std::memcpy(buf, text.data(), std::min(text.size(), size));
  if (text.size() < size) buf[text.size()] = '\0';
}

inline std::uint32_t fake_abi() { return fake_plugin().abi; }
inline const char* fake_name() { return fake_plugin().null_name ? nullptr : fake_plugin().name.c_str(); }
inline std::int32_t fake_device() { return fake_plugin().device; }
inline int fake_supports(const opval_problem*, char* reason, std::size_t size) {
  write_message(fake_plugin().reason, reason, size);
  return fake_plugin().supports_code;
}
inline int fake_execute(const opval_problem*, const opval_tensor*, std::size_t, opval_tensor*, std::size_t,
                        void*, char* message, std::size_t size) {
  write_message(fake_plugin().message, message, size);
  return fake_plugin().execute_code;
}

/// Decodes the input: a flags byte (1: the ABI version follows, 2: null name, 4: exports
/// opval_plugin_device), [u32 ABI], [u32 device], u8 supports code, u8 execute code, then
/// the name, the reason (length-prefixed) and the message (the rest).
inline fake_plugin_answers decode_answers(std::span<const std::uint8_t> data) {
  byte_reader in(data);
  fake_plugin_answers a;
  const std::uint8_t flags = in.byte();
  if (flags & 1) a.abi = in.u32();
  a.null_name = flags & 2;
  a.has_device = flags & 4;
  if (a.has_device) a.device = static_cast<std::int32_t>(in.u32());
  a.supports_code = static_cast<std::int8_t>(in.byte());
  a.execute_code = static_cast<std::int8_t>(in.byte());
  a.name = in.chunk();
  a.reason = in.chunk();
  // Long reasons matter (the buffer is 1024 bytes): a 0xff length byte repeats the reason.
  if (!a.reason.empty() && static_cast<unsigned char>(a.reason[0]) == 0xff) a.reason = std::string(1500, 'r');
  a.message = in.rest();
  return a;
}

/// What opval makes of a plugin's metadata: the loader's checks, the backend's name, its
/// supports() answer, one case through the runner (its execute() message), and every
/// string of the result through the JSONL and console reporters.
inline void plugin_metadata(std::span<const std::uint8_t> data) {
  static const problem p = parse_problem("matmul m=2 n=3 k=2");
  fake_plugin() = decode_answers(data);
  detail::plugin_entry_points f;
  f.abi_version = fake_abi;
  f.name = fake_name;
  f.supports = fake_supports;
  f.execute = fake_execute;
  if (fake_plugin().has_device) f.device = fake_device;
  std::unique_ptr<backend> b;
  try {
    b = detail::make_plugin_backend(f, "fuzz.so");
  } catch (const error&) {
    return;
  }
  run_options o;
  o.perturb_check = false;
  case_result r;
  try {
    r = run_case(p, *b, o, "fuzz");
  } catch (const error& e) {
    r.backend = b->name();
    r.v.reason = e.what();
  }
  std::ostringstream sink;
  auto console = make_console_reporter(sink, {.verbose = true, .show_backend = true});
  console->on_result(r);
  sink << to_json_line(r);
}

}  // namespace opval::fuzz
