// The pooling suites' windows and lines (pool_suite.hpp).
#include "ops/common_pool/pool_suite.hpp"

#include <fmt/format.h>

namespace opval::ops::pool {

std::vector<std::string> suite_windows(std::string_view tag, bool dilated) {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  std::vector<std::string> w{
      "mb=2 c=3 ih=8 iw=8 kh=2 kw=2 sh=2 sw=2",
      "mb=1 c=4 ih=7 iw=9 kh=3 kw=3 sh=1 sw=1 pt=1 pb=1 pl=1 pr=1",
      "mb=1 c=2 ih=10 iw=7 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 ceil_mode=1",
  };
  if (dilated) w.push_back("mb=1 c=3 ih=12 iw=12 kh=3 kw=3 sh=1 sw=1 pt=2 pb=2 pl=2 pr=2 dh=2 dw=2");
  if (smoke) return w;
  for (const char* more : {
           "mb=2 c=5 ih=13 iw=11 kh=3 kw=2 sh=2 sw=1 pt=1 pb=0 pl=0 pr=1",
           "mb=1 c=16 ih=14 iw=14 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1",
           "mb=1 c=8 ih=7 iw=7 kh=7 kw=7 sh=1 sw=1",
           "mb=4 c=3 ih=5 iw=6 kh=1 kw=1 sh=1 sw=1",
           "mb=1 c=3 ih=32 iw=32 kh=5 kw=5 sh=3 sw=3 pt=2 pb=2 pl=2 pr=2 ceil_mode=1",
           "mb=2 c=3 ih=9 iw=9 kh=4 kw=4 sh=3 sw=3 pt=2 pb=1 pl=1 pr=2 ceil_mode=1",
           "mb=1 c=64 ih=56 iw=56 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1",
           "mb=1 c=1 ih=1 iw=17 kh=1 kw=5 sh=1 sw=4 pl=2 pr=2 ceil_mode=1",
       })
    w.emplace_back(more);
  if (dilated) w.emplace_back("mb=1 c=2 ih=9 iw=10 kh=2 kw=3 sh=2 sw=2 dh=3 dw=2 ceil_mode=1");
  return w;
}

std::vector<std::string> empty_windows(std::string_view tag) {
  if (tag != "regression") return {};
  return {"mb=0 c=3 ih=8 iw=8 kh=2 kw=2 sh=2 sw=2", "mb=1 c=0 ih=8 iw=8 kh=3 kw=3 sh=1 sw=1 pt=1 pb=1 pl=1 pr=1"};
}

std::vector<std::string> suite_fills() {
  return {"default", "positive", "wide", "cancel", "large", "uniform", "exact", "special"};
}

std::vector<std::string> suite_lines(const op_spec& op, const std::vector<std::string>& shapes,
                                     const fills_fn& fills,
                                     const std::function<std::string(std::size_t)>& extra,
                                     const std::function<bool(const std::string&, const std::string&)>& keep) {
  std::vector<std::string> lines;
  for (const std::string& dt : op.contracts()) {
    const std::vector<std::string> dt_fills = fills(dt);
    for (const std::string& shape : shapes) {
      if (keep && !keep(dt, shape)) continue;
      const std::size_t i = lines.size();
      const std::string more = extra ? extra(i) : "";
      lines.push_back(fmt::format("{} {}{}{} layout={} dt={} fill={}", op.name(), shape, more.empty() ? "" : " ", more,
                                  i % 2 ? "nhwc" : "nchw", dt, dt_fills[i % dt_fills.size()]));
    }
  }
  return lines;
}

feature_table pool_features(const std::vector<std::string>& planes) {
  feature_table t;
  t.base = planes.front() + " layout=nchw";
  std::vector<std::string> fills;
  for (const std::string& f : suite_fills())
    if (f != "default") fills.push_back("fill=" + f);
  t.features = {{"window", {planes.begin() + 1, planes.end()}}, {"layout", {"layout=nhwc"}}, {"fill", fills}};
  return t;
}

}  // namespace opval::ops::pool
