// The plugin backend: adapts a shared library exporting the C ABI of opval/plugin.h to
// opval::backend. Host tensors are passed as views (no copies), so the kernel sees exactly the
// strides and padding the case asks for. A plugin that asks for device tensors
// (opval_plugin_device) gets device copies of the same strided extents, through the device
// runtime registered for that kind (none in a build without CUDA: its cases are SKIPPED).
#include "backends/plugin/plugin_backend.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/backend_modules.hpp"
#include "core/device.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/plugin.h"
#include "plugin_entry_points.hpp"

namespace opval {
namespace {

// The C enum mirrors opval::dtype by value; a reordering of either would silently
// reinterpret every tensor a plugin receives.
static_assert(OPVAL_DTYPE_F64 == static_cast<int>(dtype::f64) &&
              OPVAL_DTYPE_F32 == static_cast<int>(dtype::f32) &&
              OPVAL_DTYPE_TF32 == static_cast<int>(dtype::tf32) &&
              OPVAL_DTYPE_F16 == static_cast<int>(dtype::f16) &&
              OPVAL_DTYPE_BF16 == static_cast<int>(dtype::bf16) &&
              OPVAL_DTYPE_F8_E4M3 == static_cast<int>(dtype::f8_e4m3) &&
              OPVAL_DTYPE_F8_E5M2 == static_cast<int>(dtype::f8_e5m2) &&
              OPVAL_DTYPE_I8 == static_cast<int>(dtype::i8) &&
              OPVAL_DTYPE_U8 == static_cast<int>(dtype::u8) &&
              OPVAL_DTYPE_I32 == static_cast<int>(dtype::i32) &&
              OPVAL_DTYPE_I64 == static_cast<int>(dtype::i64) &&
              OPVAL_DTYPE_BOOLEAN == static_cast<int>(dtype::boolean) &&
              OPVAL_DTYPE_F8_E4M3FNUZ == static_cast<int>(dtype::f8_e4m3fnuz) &&
              OPVAL_DTYPE_F8_E5M2FNUZ == static_cast<int>(dtype::f8_e5m2fnuz) &&
              OPVAL_DTYPE_F8_E8M0 == static_cast<int>(dtype::f8_e8m0) &&
              OPVAL_DTYPE_F4_E2M1 == static_cast<int>(dtype::f4_e2m1) &&
              OPVAL_DTYPE_F6_E2M3 == static_cast<int>(dtype::f6_e2m3) &&
              OPVAL_DTYPE_F6_E3M2 == static_cast<int>(dtype::f6_e3m2) &&
              OPVAL_DTYPE_I4 == static_cast<int>(dtype::i4) && OPVAL_DTYPE_U4 == static_cast<int>(dtype::u4),
              "opval_dtype must match opval::dtype");
static_assert(OPVAL_DEVICE_CPU == static_cast<int>(device_kind::cpu) &&
              OPVAL_DEVICE_CUDA == static_cast<int>(device_kind::cuda),
              "opval_device_kind must match opval::device_kind");

/// Closes the library when the last owner goes.
struct library_closer {
  void operator()(void* handle) const noexcept { dlclose(handle); }
};
using library_handle = std::unique_ptr<void, library_closer>;

/// The problem in C form; owns the strings the C structs point into. `contract` is the whole
/// contract for a plugin of minor >= 1, the types alone for minor 0 (opval/plugin.h).
class c_problem {
 public:
  c_problem(const problem& p, std::uint32_t minor)
      : op_(p.op()), descriptor_(p.to_string()),
        contract_(p.dt.types_string() + (minor >= 1 ? options_string(p.dt) : "")) {
    for (const attr_def& d : p.spec().schema().defs()) attrs_.emplace_back(d.name, value_text(p, d));
    for (const auto& [name, value] : attrs_) c_attrs_.push_back({name.c_str(), value.c_str()});
    view_ = {op_.c_str(), descriptor_.c_str(), contract_.c_str(), c_attrs_.data(), c_attrs_.size()};
  }
  const opval_problem* get() const { return &view_; }

 private:
  /// The attribute's value (its default when unset) as the descriptor writes it; an empty
  /// dims list is "" rather than to_string's "scalar".
  static std::string value_text(const problem& p, const attr_def& d) {
    const attr_value& v = p.value(d.name);
    const auto* shape = std::get_if<dims>(&v);
    return shape && shape->empty() ? std::string() : format_attr_value(v);
  }

  std::string op_, descriptor_, contract_;
  std::vector<std::pair<std::string, std::string>> attrs_;
  std::vector<opval_attr> c_attrs_;
  opval_problem view_{};
};

/// A C view of a tensor (shares shape and strides with it) whose element 0 is at `data`:
/// the tensor's own storage, or its device copy.
opval_tensor c_view(const tensor& t, const void* data, device_kind where) {
  return {static_cast<std::int32_t>(t.type()), t.rank(), t.shape().data(), t.strides().data(),
          const_cast<void*>(data), static_cast<std::int32_t>(where)};
}

/// A message from a fixed buffer the plugin may have left unterminated, on one line: control
/// characters (a newline would split the reason's line in every report) become spaces.
std::string message_of(const char* buf, std::size_t size) {
  std::string text(buf, strnlen(buf, size));
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return text;
}

/// The backend is named plugin:<name>, a word that known-failures files, --backend lists and
/// table columns can hold: 1 to 64 printable ASCII characters, no space and no comma.
bool valid_plugin_name(std::string_view n) {
  return !n.empty() && n.size() <= 64 && std::all_of(n.begin(), n.end(), [](char c) {
           return c > 0x20 && c < 0x7f && c != ',';
         });
}

std::string hex_escape(unsigned char c) {
  const char digits[] = "0123456789abcdef";
  return {'\\', 'x', digits[c >> 4], digits[c & 15]};
}

/// Up to 64 bytes of `text` with non-printable bytes as \xNN, to quote it in an error.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += hex_escape(c);
  }
  return text.size() > 64 ? out + "..." : out;
}

class plugin_backend final : public backend {
 public:
  /// `handle` (null for entry points that live in no library) stays open while this lives.
  plugin_backend(const detail::plugin_entry_points& f, const std::string& path, library_handle handle)
      : path_(path), handle_(std::move(handle)), abi_version_(f.abi_version), name_(f.name),
        supports_(f.supports), execute_(f.execute) {
    std::uint32_t v = abi_version_();
    if (v != OPVAL_PLUGIN_ABI_VERSION)
      throw error("plugin '" + path + "' was built for plugin ABI version " + std::to_string(v) +
                  " but this opval supports plugin ABI version " +
                  std::to_string(OPVAL_PLUGIN_ABI_VERSION) + "; rebuild it against this opval's "
                  "include/opval/plugin.h");
    minor_ = f.abi_minor_version ? f.abi_minor_version() : 0;
    if (minor_ > OPVAL_PLUGIN_ABI_MINOR_VERSION)
      throw error("plugin '" + path + "' was built for plugin ABI " + abi_text(minor_) + " but this opval supports "
                  "plugin ABI " + abi_text(OPVAL_PLUGIN_ABI_MINOR_VERSION) + " and older minors; rebuild it against "
                  "this opval's include/opval/plugin.h or use a newer opval");
    const char* n = name_();
    if (!n)
      throw error("plugin '" + path + "': opval_plugin_name() returned NULL, not a name of 1 to 64 printable "
                  "ASCII characters without spaces or commas");
    name_text_ = n;
    if (!valid_plugin_name(name_text_))
      throw error("plugin '" + path + "': opval_plugin_name() returned '" + printable(name_text_) +
                  "', not a name of 1 to 64 printable ASCII characters without spaces or commas");
    resolve_device(f.device);
  }

  std::string name() const override { return "plugin:" + name_text_; }
  std::string version() const override { return "plugin ABI " + abi_text(minor_) + " (" + path_ + ")"; }

  support supports(const problem& p) const override {
    // A minor-0 plugin sees the contract's types alone: it would take dt=f32 denorm=ftz for f32.
    if (const std::string options = options_string(p.dt); minor_ == 0 && !options.empty())
      return support::unimplemented(
          "plugin ABI " + abi_text(minor_) + " sees only the contract's types (" + p.dt.types_string() +
          "), so opval does not run it on a contract with options (" + options.substr(1) +
          "); a plugin that declares opval_plugin_abi_minor_version() >= 1 sees and may accept them");
    c_problem cp(p, minor_);
    std::array<char, 1024> reason{};
    int code = supports_(cp.get(), reason.data(), reason.size());
    std::string why = message_of(reason.data(), reason.size());
    switch (code) {
      case OPVAL_PLUGIN_SUPPORTED: return device_support();
      case OPVAL_PLUGIN_UNIMPLEMENTED: return support::unimplemented(why);
      case OPVAL_PLUGIN_SKIPPED: return support::skipped(why);
      // An answer outside the ABI is the plugin's defect, not a refusal: the case FAILS with it.
      default:
        throw error("plugin '" + path_ + "': opval_plugin_supports() returned " + std::to_string(code) +
                    ", not OPVAL_PLUGIN_SUPPORTED (0), OPVAL_PLUGIN_UNIMPLEMENTED (1) or OPVAL_PLUGIN_SKIPPED (2)");
    }
  }

  /// Device plugins: uploads every input and output (outputs too, so padding comes back).
  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    if (device_ == device_kind::cpu) return;
    device_runtime& rt = require_runtime();
    mirror_ = std::make_unique<device_mirror>(rt);
    device_in_.clear();
    device_out_.clear();
    for (const tensor& t : in) device_in_.push_back(mirror_->upload(t));
    for (const tensor& t : out) device_out_.push_back(mirror_->upload(t));
  }

  execution_info execute(const problem& p, std::span<const tensor> in,
                         std::span<tensor> out) override {
    c_problem cp(p, minor_);
    const bool on_device = device_ != device_kind::cpu;
    if (on_device && device_in_.size() != in.size()) throw error("plugin backend: execute without prepare");
    std::vector<opval_tensor> c_in, c_out;
    for (std::size_t i = 0; i < in.size(); ++i)
      c_in.push_back(c_view(in[i], on_device ? device_in_[i] : in[i].data(), device_));
    for (std::size_t i = 0; i < out.size(); ++i)
      c_out.push_back(c_view(out[i], on_device ? device_out_[i] : out[i].data(), device_));
    device_runtime* rt = on_device ? &require_runtime() : nullptr;
    std::array<char, 1024> message{};
    if (rt) rt->timer_start();
    int code = execute_(cp.get(), c_in.data(), c_in.size(), c_out.data(), c_out.size(),
                        rt ? rt->stream() : nullptr, message.data(), message.size());
    if (rt) rt->timer_stop();
    if (code != 0) {
      std::string why = message_of(message.data(), message.size());
      // Before minor 1 every nonzero code was a failure: an old plugin's 3 still is.
      if (code == OPVAL_PLUGIN_DECLINED && minor_ >= 1)
        throw declined(why.empty() ? "the plugin declined the problem without a reason" : why);
      throw error("plugin kernel failed: " +
                  (why.empty() ? "code " + std::to_string(code) + " without a message" : why));
    }
    return {name(), ""};
  }

  /// Device plugins: waits for the kernel, downloads the outputs, returns the event time.
  std::optional<double> synchronize(std::span<tensor> out) override {
    if (device_ == device_kind::cpu || !mirror_) return std::nullopt;
    device_runtime& rt = require_runtime();
    for (std::size_t i = 0; i < out.size() && i < device_out_.size(); ++i) mirror_->download(device_out_[i], out[i]);
    rt.synchronize();
    mirror_.reset();
    device_in_.clear();
    device_out_.clear();
    return rt.elapsed_seconds();
  }

 private:
  /// "1.<minor>", the ABI a plugin of that minor was built for.
  static std::string abi_text(std::uint32_t minor) {
    return std::to_string(OPVAL_PLUGIN_ABI_VERSION) + "." + std::to_string(minor);
  }

  /// Asks the optional opval_plugin_device (absent: host tensors).
  void resolve_device(std::int32_t (*device)()) {
    if (!device) return;
    const std::int32_t kind = device();
    if (kind != OPVAL_DEVICE_CPU && kind != OPVAL_DEVICE_CUDA)
      throw error("plugin '" + path_ + "': opval_plugin_device() returned " + std::to_string(kind) +
                  ", not an opval_device_kind (OPVAL_DEVICE_CPU or OPVAL_DEVICE_CUDA)");
    device_ = static_cast<device_kind>(kind);
  }

  /// The plugin's verdict for a problem it supports: SKIPPED when its device is missing.
  support device_support() const {
    if (device_ == device_kind::cpu) return support::yes();
    const device_runtime* rt = find_device_runtime(device_);
    if (!rt) {
      if (const std::optional<std::string> why = detail::module_failure_of("cuda"))
        return support::skipped("plugin wants CUDA device tensors, but the cuda backend's module " + *why);
      return support::skipped("plugin wants CUDA device tensors, but this opval was built without CUDA");
    }
    if (std::string why = rt->unavailable_reason(); !why.empty()) return support::skipped(why);
    return support::yes();
  }

  device_runtime& require_runtime() const {
    if (const support s = device_support(); !s.ok) throw error(s.reason);
    return *find_device_runtime(device_);
  }

  std::string path_;
  library_handle handle_;
  std::string name_text_;
  decltype(detail::plugin_entry_points::abi_version) abi_version_;
  decltype(detail::plugin_entry_points::name) name_;
  decltype(detail::plugin_entry_points::supports) supports_;
  decltype(detail::plugin_entry_points::execute) execute_;
  std::uint32_t minor_ = 0;  // the plugin's ABI minor version
  device_kind device_ = device_kind::cpu;
  // Device copies of the current case's operands (device plugins only).
  std::unique_ptr<device_mirror> mirror_;
  std::vector<void*> device_in_, device_out_;
};

/// Looks every entry point up first so that one error names all that are missing.
detail::plugin_entry_points resolve_symbols(void* handle, const std::string& path) {
  std::vector<std::string> missing;
  auto find = [&](const char* symbol) {
    void* f = dlsym(handle, symbol);
    if (!f) missing.emplace_back(symbol);
    return f;
  };
  detail::plugin_entry_points f;
  f.abi_version = reinterpret_cast<decltype(f.abi_version)>(find("opval_plugin_abi_version"));
  f.name = reinterpret_cast<decltype(f.name)>(find("opval_plugin_name"));
  f.supports = reinterpret_cast<decltype(f.supports)>(find("opval_plugin_supports"));
  f.execute = reinterpret_cast<decltype(f.execute)>(find("opval_plugin_execute"));
  f.abi_minor_version = reinterpret_cast<decltype(f.abi_minor_version)>(dlsym(handle, "opval_plugin_abi_minor_version"));
  f.device = reinterpret_cast<decltype(f.device)>(dlsym(handle, "opval_plugin_device"));
  if (missing.empty()) return f;
  std::string list;
  for (const std::string& s : missing) list += (list.empty() ? "" : ", ") + s;
  throw error("plugin '" + path + "' does not export " + list +
              " (see include/opval/plugin.h; declare it with OPVAL_PLUGIN_EXPORT)");
}

}  // namespace

std::unique_ptr<backend> detail::make_plugin_backend(const plugin_entry_points& f, const std::string& path) {
  return std::make_unique<plugin_backend>(f, path, nullptr);
}

std::unique_ptr<backend> load_plugin_backend(const std::string& path) {
  dlerror();
  // A bare file name means the file here, not a search of the loader's library path.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  library_handle handle(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char* why = dlerror();
    throw error("cannot load plugin '" + path + "': " + (why ? why : "unknown dlopen error"));
  }
  const detail::plugin_entry_points f = resolve_symbols(handle.get(), path);
  return std::make_unique<plugin_backend>(f, path, std::move(handle));
}

}  // namespace opval
