// Arrays from files: NumPy's .npy (format versions 1 to 3) and .npz archives of them, stored or
// deflated (np.savez, np.savez_compressed), read with libzip; ONNX TensorProto .pb files
// (tensor_proto_file.cpp).
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/array_files.hpp"
#include "core/size_product.hpp"
#include "core/tensor_proto_file.hpp"
#include "opval/error.hpp"
#include "opval/judge.hpp"

namespace opval {
namespace {

// The value after `'key':` in an .npy header (a Python dict literal), up to its end.
std::string_view header_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  const std::size_t at = header.find(quoted);
  if (at == std::string_view::npos) throw error(fmt::format("its header has no '{}'", key));
  std::size_t v = header.find(':', at + quoted.size());
  if (v == std::string_view::npos) throw error(fmt::format("its header's '{}' has no value", key));
  v = header.find_first_not_of(' ', v + 1);
  return header.substr(v == std::string_view::npos ? header.size() : v);
}

std::string parse_descr(std::string_view header) {
  std::string_view v = header_value(header, "descr");
  if (v.empty() || (v[0] != '\'' && v[0] != '"'))
    throw error("its element type is a structured record, which opval does not read (save one plain array)");
  const std::size_t end = v.find(v[0], 1);
  if (end == std::string_view::npos) throw error("its header's 'descr' is not closed");
  return std::string(v.substr(1, end - 1));
}

dims parse_shape(std::string_view header) {
  std::string_view v = header_value(header, "shape");
  if (v.empty() || v[0] != '(') throw error("its header's 'shape' is not a tuple");
  const std::size_t end = v.find(')');
  if (end == std::string_view::npos) throw error("its header's 'shape' is not closed");
  dims shape;
  std::string_view items = v.substr(1, end - 1);
  while (!items.empty()) {
    const std::size_t comma = items.find(',');
    std::string item(items.substr(0, comma));
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (!item.empty()) {
      std::size_t used = 0;
      long long n = -1;
      try {
        n = std::stoll(item, &used);
      } catch (const std::exception&) {
      }
      if (n < 0 || used != item.size()) throw error(fmt::format("its shape has the extent '{}'", item));
      shape.push_back(n);
    }
    if (comma == std::string_view::npos) break;
    items.remove_prefix(comma + 1);
  }
  return shape;
}

int element_size_of(const std::string& descr) {
  const int size = descr.size() >= 3 ? std::atoi(descr.c_str() + 2) : 0;
  if (size <= 0) throw error(fmt::format("its element type '{}' has no size", descr));
  return size;
}

// Column-major bytes (fortran_order) reordered row-major.
std::vector<std::byte> row_major(const std::vector<std::byte>& column_major, const dims& shape, int size) {
  std::vector<std::byte> out(column_major.size());
  const std::int64_t n = element_count(shape);
  dims index(shape.size(), 0);
  for (std::int64_t linear = 0; linear < n; ++linear) {
    std::int64_t offset = 0, stride = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) offset += index[d] * stride, stride *= shape[d];
    std::memcpy(out.data() + linear * size, column_major.data() + offset * size, static_cast<std::size_t>(size));
    for (std::size_t d = shape.size(); d-- > 0;) {  // the next row-major index
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// One .npy image (a file's bytes, or an .npz member's).
array_data parse_npy(std::string name, std::span<const std::byte> file) {
  constexpr std::string_view magic = "\x93NUMPY";
  if (file.size() < 10 || std::memcmp(file.data(), magic.data(), magic.size()) != 0)
    throw error("it is no NumPy .npy array (no \\x93NUMPY magic)");
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(file[i]); };
  const int major = byte(6);
  if (major < 1 || major > 3) throw error(fmt::format("it is .npy format version {}, opval reads 1 to 3", major));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + length_bytes) throw error("it ends inside its header");
  std::size_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::size_t(byte(8 + i)) << (8 * i);
  const std::size_t data_at = 8 + length_bytes + header_length;
  if (data_at > file.size()) throw error("its header runs past the end of the file");
  const std::string_view header(reinterpret_cast<const char*>(file.data()) + 8 + length_bytes, header_length);
  array_data a;
  a.name = std::move(name);
  a.type = parse_descr(header);
  a.shape = parse_shape(header);
  const bool fortran = header_value(header, "fortran_order").starts_with("True");
  const int size = element_size_of(a.type);
  const auto expected = static_cast<std::size_t>(size_product(element_count(a.shape), size, a.shape));
  if (file.size() - data_at != expected)
    throw error(fmt::format("it holds {} bytes of data for shape [{}] of '{}' ({} bytes)", file.size() - data_at,
                            fmt::format("{}", fmt::join(a.shape, ",")), a.type, expected));
  a.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(data_at), file.end());
  if (fortran && a.shape.size() > 1) a.bytes = row_major(a.bytes, a.shape, size);
  return a;
}

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) throw error("cannot read it");
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

struct zip_closer {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct zip_file_closer {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

// A member's bytes as it decompresses them, read in chunks: the size an archive claims may
// be a lie (a 4 KB file claiming 2^60 bytes), and what does not fit in memory is an error.
std::vector<std::byte> read_member(zip_file_t* member, const std::string& key) {
  std::vector<std::byte> bytes;
  std::byte chunk[1 << 16];
  try {
    for (;;) {
      const zip_int64_t n = zip_fread(member, chunk, sizeof chunk);
      if (n < 0) throw error(fmt::format("its member '{}' cannot be decompressed ({})", key,
                                         zip_error_strerror(zip_file_get_error(member))));
      if (n == 0) return bytes;
      bytes.insert(bytes.end(), chunk, chunk + n);
    }
  } catch (const std::bad_alloc&) {
    throw error(fmt::format("its member '{}' decompresses to more than this machine's memory", key));
  }
}

std::vector<array_data> read_npz(const std::string& path) {
  int code = 0;
  std::unique_ptr<zip_t, zip_closer> archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw error(fmt::format("it is no readable .npz archive ({})", why));
  }
  std::vector<array_data> arrays;
  const zip_int64_t n = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), i, 0, &st) != 0) throw error(zip_strerror(archive.get()));
    std::string key = st.name;
    if (key.ends_with('/')) continue;  // a folder entry
    if (!key.ends_with(".npy")) throw error(fmt::format("its member '{}' is no .npy array", key));
    std::unique_ptr<zip_file_t, zip_file_closer> member(zip_fopen_index(archive.get(), i, 0));
    if (!member) throw error(fmt::format("its member '{}' cannot be read ({})", key, zip_strerror(archive.get())));
    const std::vector<std::byte> bytes = read_member(member.get(), key);
    key.resize(key.size() - 4);
    try {
      arrays.push_back(parse_npy(key, bytes));
    } catch (const error& e) {
      throw error(fmt::format("its member '{}': {}", key, e.what()));
    }
  }
  if (arrays.empty()) throw error("it holds no array");
  return arrays;
}

// A .npy file (format 1.0) of one array: the magic, the header dictionary padded with spaces
// so that the data starts on a 64-byte boundary, the bytes.
std::vector<std::byte> npy_of(const array_data& a) {
  const std::string shape = a.shape.size() == 1 ? fmt::format("({},)", a.shape[0]) : fmt::format("({})", fmt::join(a.shape, ", "));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", a.type, shape);
  const std::size_t prefix = 10;  // magic (6), version (2), header length (2)
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header.push_back('\n');
  std::vector<std::byte> out(prefix + header.size() + a.bytes.size());
  const char magic[] = "\x93NUMPY\x01\x00";
  std::memcpy(out.data(), magic, 8);
  out[8] = static_cast<std::byte>(header.size() & 0xff);
  out[9] = static_cast<std::byte>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (!a.bytes.empty()) std::memcpy(out.data() + prefix + header.size(), a.bytes.data(), a.bytes.size());
  return out;
}

}  // namespace

std::vector<array_data> read_array_files(const std::vector<std::string>& files) {
  std::vector<array_data> all;
  for (const std::string& f : files)
    for (array_data& a : read_array_file(f)) all.push_back(std::move(a));
  return all;
}

void write_npz(const std::string& path, std::span<const array_data> arrays) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive) throw error(fmt::format("'{}': cannot be created as an .npz archive", path));
  // libzip reads each member's bytes when the archive closes: they must live until then.
  std::vector<std::vector<std::byte>> members;
  members.reserve(arrays.size());
  for (const array_data& a : arrays) {
    members.push_back(npy_of(a));
    zip_source_t* source = zip_source_buffer(archive, members.back().data(), members.back().size(), 0);
    if (!source || zip_file_add(archive, (a.name + ".npy").c_str(), source, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) < 0) {
      if (source) zip_source_free(source);
      const std::string why = zip_strerror(archive);
      zip_discard(archive);
      throw error(fmt::format("'{}': cannot add '{}' ({})", path, a.name, why));
    }
    zip_set_file_compression(archive, zip_name_locate(archive, (a.name + ".npy").c_str(), 0), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive) != 0) {
    const std::string why = zip_strerror(archive);
    zip_discard(archive);
    throw error(fmt::format("'{}': cannot be written ({})", path, why));
  }
}

std::vector<array_data> read_array_file(const std::string& path) {
  const std::filesystem::path p(path);
  try {
    if (!std::filesystem::exists(p)) throw error("no such file");
    if (p.extension() == ".npz") return read_npz(path);
    if (p.extension() == ".pb") return detail::read_tensor_proto(path, p.stem().string());
    if (p.extension() == ".npy") {
      std::vector<array_data> one;
      one.push_back(parse_npy(p.stem().string(), read_bytes(path)));
      return one;
    }
    throw error("opval reads arrays from .npy, .npz and ONNX TensorProto .pb files");
  } catch (const error& e) {
    throw error(fmt::format("'{}': {}", path, e.what()));
  }
}

}  // namespace opval
