#pragma once
// Running the opval binary from tests: its stdout, stderr and exit code.
#include <unistd.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace opval::testing {

/// What one opval invocation produced.
struct cli_result {
  int code = -1;
  std::string out;
  std::string err;
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

/// `s` as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// A scratch directory of this process, named after `prefix`, removed when it goes.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~scratch_dir() { std::filesystem::remove_all(path_); }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs `binary` with `args` (each one shell word) in directory `dir`; stderr goes through
/// a file in `dir`, which is removed afterwards. The file is named by this process and call:
/// ctest runs tests in parallel, and several share the temporary directory.
inline cli_result run_cli(const std::string& binary, const std::filesystem::path& dir,
                          const std::vector<std::string>& args) {
  static int calls = 0;
  const std::filesystem::path err_file =
      dir / ("opval_stderr_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".txt");
  std::string cmd = "cd " + quote(dir.string()) + " && " + quote(binary);
  for (const std::string& a : args) cmd += " " + quote(a);
  cmd += " 2>" + quote(err_file.string());
  cli_result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_all(err_file);
  std::filesystem::remove(err_file);
  return r;
}

}  // namespace opval::testing
