#pragma once
// Reading the arrays of several files, and writing arrays to a file: an .npz archive
// of .npy members, as np.savez writes it, for the graph reference's intermediates.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "opval/judge.hpp"

namespace opval {

/// The one opval type an array's stored type names (a NumPy type string such as "<f4", or an
/// opval name such as "bf16"), or nullopt (raw records, big-endian, none opval has). Throws
/// opval::error for a string that is no type.
std::optional<dtype> dtype_of_stored(const std::string& type);

/// The arrays of every file, in order (read_array_file of each).
std::vector<array_data> read_array_files(const std::vector<std::string>& files);

/// Writes `arrays` (each typed by a NumPy type string, "<f8", "<i8", "|b1", with row-major
/// bytes) to an uncompressed .npz archive at `path`, one member per array named after it.
/// Throws opval::error naming the file when it cannot be written.
void write_npz(const std::string& path, std::span<const array_data> arrays);

}  // namespace opval
