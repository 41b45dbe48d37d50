#pragma once
// Side-by-side timing: runs candidates alternately so both see the same machine noise, and
// reports medians.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace opval::bench {

/// Median wall time in seconds of `reps` runs of each function, interleaved.
inline std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& fns, int reps) {
  std::vector<std::vector<double>> times(fns.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < fns.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      fns[i]();
      times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

}  // namespace opval::bench
