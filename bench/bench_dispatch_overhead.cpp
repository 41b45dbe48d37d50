// Dispatch overhead per case on tiny problems, where the library call itself is cheap: opval's
// backend path (run_backend: prepare + execute + synchronize, on pre-filled tensors) against
// the same library call made directly (a oneDNN primitive created once, then execute + wait;
// cblas_sgemm), timed alternately in one loop so that both see the same machine noise.
// Target: overhead <= 20 us per case.
//
// Counters, medians over the iterations, in microseconds:
//   library   the library call alone
//   opval     run_backend on the same problem and tensors
//   overhead  opval - library, paired per iteration
//   prepare, kernel  opval's own split of its path (backend_run_times)
//   library_create  (oneDNN) creating the primitive descriptor and the primitive again, as
//             prepare does: the library's own share of prepare (the primitive comes from
//             oneDNN's primitive cache)
//   case      a whole run_case (fill, run, fp64 reference, bound, compare, perturbation re-run)
//   case_beyond_library  case - 2 x library: everything a case spends beyond its two library
//             calls (the case's own and the perturbation re-run's)
// A backend that is not built is skipped with a note. Usage: bench_dispatch_overhead
// [Google Benchmark flags], e.g. --benchmark_repetitions=3 --benchmark_report_aggregates_only=true.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend_run.hpp"
#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

#if OPVAL_BENCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif
#if OPVAL_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace opval {
namespace {

using steady = std::chrono::steady_clock;

double micros(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// One problem on one backend, with its tensors allocated and filled once, as a case has them
/// when run_backend starts.
struct fixture {
  problem p;
  std::unique_ptr<backend> b;
  std::vector<tensor> in, out;

  fixture(const std::string& backend_name, const std::string& descriptor)
      : p(parse_problem(descriptor)), b(make_backend(backend_name)) {
    const op_spec& spec = p.spec();
    for (const operand& o : spec.inputs(p)) in.emplace_back(o.type, o.shape, o.lay);
    for (const operand& o : spec.outputs(p)) out.emplace_back(o.type, o.shape, o.lay);
    std::span<tensor> s(in);
    spec.fill(p, 1, s);
  }
};

/// The library call alone, made on the fixture's own tensors, set up once per benchmark;
/// `create` (when the library has such a step) redoes its set-up as the backend's prepare
/// must: for oneDNN, the primitive descriptor and the primitive (from oneDNN's cache).
struct library_call {
  std::function<void()> call;
  std::function<void()> create;
};
using library_factory = std::function<library_call(fixture&)>;

/// Times the library call, opval's backend path and a whole case alternately, and reports
/// the medians as counters.
void measure(benchmark::State& bench_state, const std::string& backend_name, const std::string& descriptor,
             const library_factory& make_library) {
  fixture f(backend_name, descriptor);
  const support s = f.b->supports(f.p);
  if (!s.ok) {
    bench_state.SkipWithError(("backend refuses the problem: " + s.reason).c_str());
    return;
  }
  library_call library = make_library(f);
  run_options o;
  o.backend = backend_name;
  std::vector<double> lib, path, diff, prep, kern, create, whole, beyond;
  std::string implementation;
  for (auto _ : bench_state) {
    // Alternate which of the two goes first, so neither always finds warm caches.
    const bool library_first = lib.size() % 2 == 0;
    double t_lib = 0, t_path = 0;
    backend_run_times bt;
    for (int turn = 0; turn < 2; ++turn) {
      const auto t0 = steady::now();
      if ((turn == 0) == library_first) {
        library.call();
        t_lib = micros(t0, steady::now());
      } else {
        implementation = run_backend(*f.b, f.p, f.in, f.out, &bt).implementation;
        t_path = micros(t0, steady::now());
      }
    }
    if (library.create) {
      const auto t0 = steady::now();
      library.create();
      create.push_back(micros(t0, steady::now()));
    }
    const case_result r = run_case(f.p, *f.b, o);
    if (r.v.st != state::passed) {
      bench_state.SkipWithError(("case did not pass: " + r.v.reason).c_str());
      return;
    }
    lib.push_back(t_lib);
    path.push_back(t_path);
    diff.push_back(t_path - t_lib);
    prep.push_back(bt.prepare * 1e6);
    kern.push_back(bt.kernel * 1e6);
    whole.push_back(r.times.total * 1e6);
    beyond.push_back(r.times.total * 1e6 - 2 * t_lib);
  }
  bench_state.counters["library"] = median(lib);
  bench_state.counters["opval"] = median(path);
  bench_state.counters["overhead"] = median(diff);
  bench_state.counters["prepare"] = median(prep);
  bench_state.counters["kernel"] = median(kern);
  if (!create.empty()) bench_state.counters["library_create"] = median(create);
  bench_state.counters["case"] = median(whole);
  bench_state.counters["case_beyond_library"] = median(beyond);
  bench_state.SetLabel(implementation);
}

#if OPVAL_BENCH_HAVE_ONEDNN
// The oneDNN primitive of the fixture's problem, created once, with memories on its tensors.
struct onednn_call {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  dnnl::primitive prim;
  std::function<dnnl::primitive()> make;  ///< descriptor, primitive descriptor, primitive
  std::unordered_map<int, dnnl::memory> args;

  static dnnl::memory::desc md(const tensor& t) {
    return dnnl::memory::desc(dnnl::memory::dims(t.shape().begin(), t.shape().end()), dnnl::memory::data_type::f32,
                              dnnl::memory::dims(t.strides().begin(), t.strides().end()));
  }
  void bind(int arg, const tensor& t) { args.emplace(arg, dnnl::memory(md(t), eng, const_cast<void*>(t.data()))); }
  void operator()() {
    prim.execute(stream, args);
    stream.wait();
  }
  /// The call and its re-creation, with the primitive created once now.
  static library_call from(std::shared_ptr<onednn_call> c) {
    c->prim = c->make();
    return {[c] { (*c)(); }, [c] { benchmark::DoNotOptimize(c->make()); }};
  }
};

library_factory onednn_matmul() {
  return [](fixture& f) {
    auto c = std::make_shared<onednn_call>();
    c->make = [&f, eng = c->eng] {
      const dnnl::matmul::desc d(onednn_call::md(f.in[0]), onednn_call::md(f.in[1]), onednn_call::md(f.out[0]));
      return dnnl::matmul(dnnl::matmul::primitive_desc(d, eng));
    };
    c->bind(DNNL_ARG_SRC, f.in[0]), c->bind(DNNL_ARG_WEIGHTS, f.in[1]), c->bind(DNNL_ARG_DST, f.out[0]);
    return onednn_call::from(c);
  };
}

library_factory onednn_softmax() {
  return [](fixture& f) {
    auto c = std::make_shared<onednn_call>();
    c->make = [&f, eng = c->eng] {
      const dnnl::softmax_v2_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate,
                                             onednn_call::md(f.in[0]), onednn_call::md(f.out[0]), f.in[0].rank() - 1);
      return dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(d, eng));
    };
    c->bind(DNNL_ARG_SRC, f.in[0]), c->bind(DNNL_ARG_DST, f.out[0]);
    return onednn_call::from(c);
  };
}

library_factory onednn_relu() {
  return [](fixture& f) {
    auto c = std::make_shared<onednn_call>();
    c->make = [&f, eng = c->eng] {
      const dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu,
                                          onednn_call::md(f.in[0]), 0.0f, 0.0f);
      return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(d, eng));
    };
    c->bind(DNNL_ARG_SRC, f.in[0]), c->bind(DNNL_ARG_DST, f.out[0]);
    return onednn_call::from(c);
  };
}
#endif

#if OPVAL_BENCH_HAVE_OPENBLAS
library_factory openblas_sgemm() {
  return [](fixture& f) {
    const tensor& a = f.in[0];
    const tensor& b = f.in[1];
    tensor& c = f.out[0];
    const blasint m = static_cast<blasint>(c.shape()[0]), n = static_cast<blasint>(c.shape()[1]),
                  k = static_cast<blasint>(a.shape()[1]);
    return library_call{[&a, &b, &c, m, n, k] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data_as<float>(), k,
                  b.data_as<float>(), n, 0.0f, c.data_as<float>(), n);
    }};
  };
}
#endif

bool built(const std::string& name) {
  const auto names = backend_names();
  const bool yes = std::find(names.begin(), names.end(), name) != names.end();
  if (!yes) std::fprintf(stderr, "backend %s is not built: its benchmarks are skipped\n", name.c_str());
  return yes;
}

void add(const std::string& backend_name, const std::string& label, const std::string& descriptor,
         library_factory make_library) {
  benchmark::RegisterBenchmark((backend_name + "/" + label).c_str(),
                               [=](benchmark::State& s) { measure(s, backend_name, descriptor, make_library); })
      ->Unit(benchmark::kMicrosecond);
}

void register_all() {
  const char* matmul = "matmul m=8 n=8 k=8";
#if OPVAL_BENCH_HAVE_ONEDNN
  if (built("onednn")) {
    add("onednn", "matmul_8x8x8", matmul, onednn_matmul());
    add("onednn", "softmax_1x64", "softmax shape=1x64", onednn_softmax());
    add("onednn", "relu_64", "relu shape=64", onednn_relu());
  }
#else
  std::fprintf(stderr, "oneDNN headers were not found at build time: onednn benchmarks are skipped\n");
#endif
#if OPVAL_BENCH_HAVE_OPENBLAS
  if (built("openblas")) add("openblas", "matmul_8x8x8", matmul, openblas_sgemm());
#else
  std::fprintf(stderr, "cblas.h was not found at build time: openblas benchmarks are skipped\n");
#endif
}

}  // namespace
}  // namespace opval

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  opval::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
