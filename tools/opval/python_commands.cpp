// `opval graph run|triage|precision` through the Python layer (python_commands.hpp). The interpreter is
// $OPVAL_PYTHON, else the one this build was configured with (the project's .venv); a small
// launcher turns a missing opval package into one error line and exit code 2, so that 1 keeps
// its meaning (a node blamed).
#include "python_commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace opval::cli {
namespace {

constexpr const char* launcher =
    "import sys\n"
    "try:\n"
    "    from opval.__main__ import main\n"
    "except ImportError as e:\n"
    "    print(f'opval: error: opval graph run, triage and precision need opval\\'s Python layer, which {sys.executable} "
    "cannot import ({e}): set OPVAL_PYTHON to a Python with opval installed (scripts/setup makes .venv)', "
    "file=sys.stderr)\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[1:]))\n";

std::string interpreter() {
  const char* chosen = std::getenv("OPVAL_PYTHON");
  return chosen && *chosen ? chosen : OPVAL_PYTHON_DEFAULT;
}

}  // namespace

bool runs_in_python(int argc, char** argv) {
  return argc > 2 && std::string_view(argv[1]) == "graph" &&
         (std::string_view(argv[2]) == "run" || std::string_view(argv[2]) == "triage" ||
          std::string_view(argv[2]) == "precision");
}

int run_in_python(int argc, char** argv) {
  const std::string python = interpreter();
  std::vector<char*> args{const_cast<char*>(python.c_str()), const_cast<char*>("-c"), const_cast<char*>(launcher)};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execvp(python.c_str(), args.data());
  std::cerr << "opval: error: opval graph " << argv[2] << " runs through opval's Python layer, and '" << python
            << "' does not start (" << std::strerror(errno)
            << "): set OPVAL_PYTHON to a Python with opval installed (scripts/setup makes .venv)\n";
  return 2;
}

}  // namespace opval::cli
