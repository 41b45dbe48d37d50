#include "core/case_budget.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "opval/op_spec.hpp"

namespace opval::detail {
namespace {

// Elements an operand's storage spans (its padding and offset included), in double: a
// problem too big for int64 is still only big.
double storage_elements(const operand& o) {
  double elements = 1;
  for (const std::int64_t e : o.shape) elements *= static_cast<double>(e);
  if (elements == 0 || o.lay.strides.empty()) return elements;
  double last = static_cast<double>(o.lay.offset);
  for (std::size_t d = 0; d < o.shape.size() && d < o.lay.strides.size(); ++d)
    last += static_cast<double>(o.shape[d] - 1) * static_cast<double>(o.lay.strides[d]);
  return last + 1;
}

struct operand_totals {
  double bytes = 0;     ///< storage, at the operands' types
  double elements = 0;  ///< logical elements (each costs 8 bytes as an fp64 copy)
};

operand_totals totals(const std::vector<operand>& ops) {
  operand_totals t;
  for (const operand& o : ops) {
    t.bytes += storage_elements(o) * static_cast<double>(traits(o.type).size_bytes);
    double n = 1;
    for (const std::int64_t e : o.shape) n *= static_cast<double>(e);
    t.elements += n;
  }
  return t;
}

// "274.9 GB", "12.5 MB": the unit that keeps a figure readable.
std::string size_text(double bytes) {
  return bytes >= 1e9 ? fmt::format("{:.1f} GB", bytes / 1e9) : fmt::format("{:.1f} MB", bytes / 1e6);
}

// MemAvailable of /proc/meminfo in bytes; nullopt where there is none.
std::optional<double> memory_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    double kib = 0;
    if (words >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}


// The peak from the operands' totals (case_peak_bytes, and the message that breaks it down).
double peak_bytes(const operand_totals& in, const operand_totals& out, const run_options& o) {
  // Output sets alive at once: the first run's, the poisoned second run's, one more for a
  // perturbation or thread-count rerun.
  const double output_sets = 1 + (o.poison_check ? 1 : 0) + (o.perturb_check || !o.threads.empty() ? 1 : 0);
  // fp64: the reference's copy of the inputs, and per output element the reference, the
  // bound, the compute bound and the comparison's copies of output and reference.
  return in.bytes + 8 * in.elements + output_sets * out.bytes + 5 * 8 * out.elements;
}

}  // namespace

double case_peak_bytes(const problem& p, const run_options& o) {
  return peak_bytes(totals(p.spec().inputs(p)), totals(p.spec().outputs(p)), o);
}

std::optional<double> case_memory_budget(const run_options& o) {
  if (o.max_memory_gb > 0) return o.max_memory_gb * 1e9;
  if (const std::optional<double> available = memory_available()) return *available / 2;
  return std::nullopt;
}

std::optional<std::string> over_memory_budget(const problem& p, const run_options& o) {
  const std::optional<double> budget = case_memory_budget(o);
  if (!budget) return std::nullopt;
  const operand_totals in = totals(p.spec().inputs(p)), out = totals(p.spec().outputs(p));
  const double peak = peak_bytes(in, out, o);
  if (peak <= *budget) return std::nullopt;
  return fmt::format("needs {}, budget {} ({}): inputs {}, outputs {}, the rest fp64 copies, reference and bounds",
                     size_text(peak), size_text(*budget),
                     o.max_memory_gb > 0 ? "--max-memory" : "half the memory available; --max-memory GB sets it",
                     size_text(in.bytes), size_text(out.bytes));
}

}  // namespace opval::detail
