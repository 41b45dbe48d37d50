// The memory checks around a kernel under test (docs/SAFETY.md): the guarded allocator's
// canaries, guard pages and fault descriptions; poisoned outputs (never-written elements,
// accumulate-into bugs), determinism across runs and thread counts, input immutability; and
// the broken kernels of examples/plugins/misbehaving_gemm.c, each with its verdict.
#include <gtest/gtest.h>

#include <omp.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/guarded_allocator.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "ops/op_testing.hpp"

namespace {

using opval::case_result;
using opval::guard_side;
using opval::problem;
using opval::run_options;
using opval::state;
using opval::tensor;
using opval::testing::function_backend;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A guarded buffer of `bytes`, labelled as the brief's example tensor.
std::byte* guarded(std::size_t bytes, guard_side side = guard_side::after, const char* name = "dst",
                   const char* role = "output 0", bool tight = false) {
  auto* p = static_cast<std::byte*>(opval::shared_guarded_allocator(side, tight).allocate(bytes, 64));
  EXPECT_TRUE(opval::label_guarded_region(p, name, role));
  return p;
}
void release(std::byte* p, std::size_t bytes, guard_side side = guard_side::after) {
  opval::shared_guarded_allocator(side).deallocate(p, bytes, 64);
}

std::string fault_text(const void* addr) {
  char buf[200];
  return opval::describe_guard_fault(addr, buf, sizeof buf) ? std::string(buf) : std::string("(none)");
}

TEST(guarded_allocator, aligned_buffer_ends_within_the_alignment_of_its_guard_page) {
  std::byte* p = guarded(80);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  std::memset(p, 1, 80);  // the whole buffer is writable
  EXPECT_EQ(opval::check_guard_canaries(p), std::nullopt);
  // 80 bytes rounded to the 64-byte alignment: the guard page starts 128 bytes in.
  EXPECT_EQ(fault_text(p + 128), "guard page after tensor 'dst' hit at byte 48 past its end (output 0, 80 bytes)");
  EXPECT_EQ(fault_text(p + 127), "(none)");
  release(p, 80);
}

TEST(guarded_allocator, canary_past_the_end_names_tensor_side_and_bytes) {
  std::byte* p = guarded(80);
  std::memset(p + 80, 0, 4);  // one f32 element past the end, inside the slack
  auto damage = opval::check_guard_canaries(p + 10);
  ASSERT_TRUE(damage.has_value());
  EXPECT_TRUE(contains(*damage, "canary after tensor 'dst' overwritten at bytes 0..3 past its end")) << *damage;
  EXPECT_TRUE(contains(*damage, "output 0, 80 bytes")) << *damage;
  release(p, 80);
}

TEST(guarded_allocator, canary_before_the_start_is_caught_with_the_guard_after) {
  std::byte* p = guarded(80, guard_side::after, "A", "input 0");
  p[-2] = std::byte{0};
  auto damage = opval::check_guard_canaries(p);
  ASSERT_TRUE(damage.has_value());
  EXPECT_TRUE(contains(*damage, "canary before tensor 'A' overwritten at bytes 2..2 before its start")) << *damage;
  release(p, 80);
}

TEST(guarded_allocator, guard_before_describes_bytes_before_the_start) {
  std::byte* p = guarded(64, guard_side::before, "A", "input 0");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_EQ(fault_text(p - 4), "guard page before tensor 'A' hit at byte 4 before its start (input 0, 64 bytes)");
  p[64] = std::byte{0};  // past the end, the slack up to the page end holds canaries
  auto damage = opval::check_guard_canaries(p);
  ASSERT_TRUE(damage.has_value());
  EXPECT_TRUE(contains(*damage, "canary after tensor 'A' overwritten at bytes 0..0 past its end")) << *damage;
  release(p, 64, guard_side::before);
}

TEST(guarded_allocator, fault_description_is_truncated_to_the_buffer) {
  std::byte* p = guarded(64);
  char buf[12];
  EXPECT_TRUE(opval::describe_guard_fault(p + 64, buf, sizeof buf));
  EXPECT_EQ(std::string(buf), "guard page ");
  int on_stack = 0;
  EXPECT_FALSE(opval::describe_guard_fault(&on_stack, buf, sizeof buf));
  release(p, 64);
  EXPECT_FALSE(opval::describe_guard_fault(p + 64, buf, sizeof buf)) << "a freed region is forgotten";
}

TEST(guarded_allocator, a_freed_mapping_is_reused_with_fresh_canaries_and_its_guard_page) {
  std::byte* p = guarded(80);
  p[80] = std::byte{0};  // damage the slack, then free
  release(p, 80);
  std::byte* q = guarded(72, guard_side::after, "B", "input 1");  // same pages: the same mapping
  EXPECT_EQ(q, p) << "the freed mapping of the same size is taken first";
  EXPECT_EQ(opval::check_guard_canaries(q), std::nullopt) << "the canaries were refilled";
  EXPECT_EQ(fault_text(q + 128), "guard page after tensor 'B' hit at byte 56 past its end (input 1, 72 bytes)");
  release(q, 72);
  // A mapping freed on one side is never handed out for the other: its guard page is elsewhere.
  std::byte* r = guarded(80, guard_side::before, "A", "input 0");
  EXPECT_EQ(fault_text(r - 4), "guard page before tensor 'A' hit at byte 4 before its start (input 0, 80 bytes)");
  release(r, 80, guard_side::before);
}

// What a worker's SIGSEGV handler does (the isolation helper's): describe, then die.
void report_guard_fault(int, siginfo_t* info, void*) {
  char buf[256];
  if (opval::describe_guard_fault(info->si_addr, buf, sizeof buf)) {
    write(STDERR_FILENO, buf, std::strlen(buf));
    write(STDERR_FILENO, "\n", 1);
  }
  _exit(3);
}
void install_guard_fault_reporter() {
  struct sigaction sa {};
  sa.sa_sigaction = report_guard_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
}

TEST(guarded_allocator_death, write_past_the_end_traps_on_the_guard_page) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::byte* p = guarded(64);
        volatile std::byte* q = p;
        q[64] = std::byte{1};
      },
      testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(
      {
        install_guard_fault_reporter();
        std::byte* p = guarded(64);
        volatile std::byte* q = p;
        q[68] = std::byte{1};
      },
      testing::ExitedWithCode(3), "guard page after tensor 'dst' hit at byte 4 past its end \\(output 0, 64 bytes\\)");
  EXPECT_EXIT(
      {
        std::byte* p = guarded(64);
        release(p, 64);  // kept for reuse, but no longer writable
        volatile std::byte* q = p;
        q[0] = std::byte{1};
      },
      testing::KilledBySignal(SIGSEGV), "");
}

// The guard reach the docs promise (docs/SAFETY.md): 64 KiB of PROT_NONE on the guard's side.
constexpr std::size_t guard_reach = std::size_t{64} << 10;

// Reads, in a child that reports the fault as the worker does, the byte `distance` bytes past
// the end (guard after: byte 0 is the first one past the end) or before the start (guard
// before: byte 1 is the one just before) of a guarded input 'A' of `bytes`, and expects the
// fault's description to name that distance.
void expect_read_traps(guard_side side, std::size_t bytes, std::size_t distance, bool tight = false) {
  const bool after = side == guard_side::after;
  const std::string expected = std::string("guard page ") + (after ? "after" : "before") +
                               " tensor 'A' hit at byte " + std::to_string(distance) +
                               (after ? " past its end" : " before its start") + " \\(input 0, " +
                               std::to_string(bytes) + " bytes\\)";
  EXPECT_EXIT(
      {
        install_guard_fault_reporter();
        std::byte* p = guarded(bytes, side, "A", "input 0", tight);
        const volatile std::byte* q = p;
        const std::byte read = after ? q[bytes + distance] : *(q - distance);
        (void)read;
        _exit(0);  // the read did not trap
      },
      testing::ExitedWithCode(3), expected)
      << (after ? "after" : "before") << ", " << bytes << " bytes, read at distance " << distance;
}

TEST(guarded_allocator_death, a_read_up_to_the_guard_reach_past_the_end_traps) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Sizes that are a multiple of the 64-byte alignment end on the guard region: every byte past
  // the end traps, as far as the reach.
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{256}})
    for (std::size_t distance : {std::size_t{0}, std::size_t{4096}, std::size_t{60} << 10, guard_reach - 1})
      expect_read_traps(guard_side::after, bytes, distance);
  // Other sizes leave slack up to the alignment, canaries that catch writes; a read traps from
  // the first byte past the slack (80 -> 128, 13 -> 64) to the reach beyond it.
  for (std::size_t bytes : {std::size_t{80}, std::size_t{13}}) {
    const std::size_t slack = (bytes + 63) / 64 * 64 - bytes;
    for (std::size_t distance : {slack, std::size_t{4096}, std::size_t{60} << 10, slack + guard_reach - 1})
      expect_read_traps(guard_side::after, bytes, distance);
  }
}

TEST(guarded_allocator_death, with_tight_guards_a_read_1_byte_past_traps_at_every_size) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // --guard-tight: no slack, so the first byte past the end is the guard's, at any size.
  for (std::size_t bytes : {std::size_t{80}, std::size_t{13}, std::size_t{4096}})
    for (std::size_t distance : {std::size_t{0}, std::size_t{4096}, std::size_t{60} << 10, guard_reach - 1})
      expect_read_traps(guard_side::after, bytes, distance, true);
}

TEST(guarded_allocator_death, a_read_up_to_the_guard_reach_before_the_start_traps_with_the_guard_before) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // With the guard before, every buffer starts on the guard region, whatever its size.
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{256}, std::size_t{80}, std::size_t{13}})
    for (std::size_t distance : {std::size_t{1}, std::size_t{4096}, std::size_t{60} << 10, guard_reach})
      expect_read_traps(guard_side::before, bytes, distance);
}

TEST(guarded_allocator, the_whole_guard_region_is_described_and_nothing_beyond_it) {
  std::byte* p = guarded(4096);
  EXPECT_EQ(fault_text(p + 4096 + guard_reach - 1),
            "guard page after tensor 'dst' hit at byte 65535 past its end (output 0, 4096 bytes)");
  EXPECT_FALSE(contains(fault_text(p + 4096 + guard_reach), "tensor 'dst'")) << "past the reach: not this guard";
  release(p, 4096);
  std::byte* q = guarded(13, guard_side::before, "A", "input 0");
  EXPECT_EQ(fault_text(q - guard_reach),
            "guard page before tensor 'A' hit at byte 65536 before its start (input 0, 13 bytes)");
  EXPECT_FALSE(contains(fault_text(q - guard_reach - 1), "tensor 'A'")) << "past the reach: not this guard";
  release(q, 13, guard_side::before);
}

// ---------------------------------------------------------------- runner, test kernels

constexpr const char* small_matmul = "matmul m=4 n=5 k=3";

case_result run(const std::string& line, opval::backend& b, const run_options& o = {}) {
  return opval::run_case(opval::parse_problem(line), b, o);
}

// A backend computing the sim's result, then `change` applied to inputs and outputs.
function_backend sim_then(std::function<void(std::span<const tensor>, std::span<tensor>)> change) {
  return function_backend("test", [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    change(in, out);
  });
}

TEST(memory_checks, correct_kernel_passes_with_every_check_on) {
  auto b = sim_then([](auto, auto) {});
  run_options o;
  o.threads = {1, 3};
  const case_result r = run(small_matmul, b, o);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
}

TEST(memory_checks, unwritten_elements_are_counted_and_located) {
  // The sim's result copied but for the last 3 elements.
  function_backend b("test", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> full{tensor(out[0].type(), out[0].shape())};
    p.spec().simulate(p, in, full);
    for (std::int64_t i = 0; i + 3 < out[0].numel(); ++i) out[0].set_at(i, full[0].at(i));
  });
  const case_result r = run(small_matmul, b);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "output 'dst': 3 of 20 elements never written (first at [3,2])")) << r.v.reason;
  run_options off;
  off.poison_check = false;
  const case_result unchecked = run(small_matmul, b, off);
  EXPECT_FALSE(contains(unchecked.v.reason, "never written")) << unchecked.v.reason;
}

TEST(memory_checks, accumulating_into_the_output_fails_on_the_garbage_prefill) {
  // dst += A.B instead of dst = A.B, in float arithmetic as a C kernel does it (a NaN's payload
  // propagates): right only if dst started at zero.
  function_backend b("test", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> s{tensor(out[0].type(), out[0].shape())};
    p.spec().simulate(p, in, s);
    volatile float* dst = out[0].data_as<float>();  // volatile: the += happens at run time, on the NaN
    for (std::int64_t i = 0; i < out[0].numel(); ++i) dst[i] = dst[i] + s[0].data_as<float>()[i];
  });
  const case_result r = run(small_matmul, b);
  EXPECT_NE(r.v.st, state::passed);  // NaN + x everywhere: MISTRUSTED (a constant output)
  EXPECT_TRUE(contains(r.v.reason, "nan")) << r.v.reason;
  EXPECT_TRUE(contains(r.v.reason, "output not overwritten: element [0,0] of output 'dst' depends on the buffer's "
                                   "previous contents (20 of 20 elements differ"))
      << r.v.reason;
  EXPECT_FALSE(contains(r.v.reason, "nondeterministic")) << r.v.reason;
  run_options off;
  off.poison_check = false;  // zero-filled outputs hide the bug
  EXPECT_EQ(run(small_matmul, b, off).v.st, state::passed);
}

// Inputs above 8 MiB are hashed in chunks on every thread: a change in any chunk, the last
// partial one included, is still found.
TEST(memory_checks, a_written_large_input_is_found_in_any_chunk) {
  const std::string line = "matmul m=2100 n=8 k=1500 dt=f32:f32:f32";  // A: 12.6 MB, four chunks
  for (const std::int64_t at : {std::int64_t(0), std::int64_t(1100000), std::int64_t(2100 * 1500 - 1)}) {
    auto b = sim_then([at](std::span<const tensor> in, auto) { const_cast<tensor&>(in[0]).set_at(at, 42.0); });
    const case_result r = run(line, b);
    EXPECT_EQ(r.v.st, state::failed) << at;
    EXPECT_TRUE(contains(r.v.reason, "kernel wrote input 'A': 1 of 3150000 elements changed")) << r.v.reason;
  }
}

TEST(memory_checks, a_written_input_is_named_with_its_first_change) {
  auto b = sim_then([](std::span<const tensor> in, auto) {
    const_cast<tensor&>(in[1]).set_at(6, 42.0);  // B is 3x5: element [1,1]
  });
  const case_result r = run(small_matmul, b);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "kernel wrote input 'B': 1 of 15 elements changed, first at [1,1] (0x42280000 vs"))
      << r.v.reason;
  EXPECT_FALSE(contains(r.v.reason, "nondeterministic")) << "runs on changed inputs are not compared";
  run_options off;
  off.input_check = false;
  EXPECT_FALSE(contains(run(small_matmul, b, off).v.reason, "wrote input"));
}

// The sim's result, one ULP off at element 0 when `differs` says so.
function_backend sim_off_by_one_ulp_when(std::function<bool()> differs) {
  return sim_then([differs](auto, std::span<tensor> out) {
    if (differs()) out[0].data_as<float>()[0] = std::nextafter(out[0].data_as<float>()[0], INFINITY);
  });
}

TEST(memory_checks, run_to_run_differences_fail_unless_the_contract_allows_them) {
  int calls = 0;
  auto b = sim_off_by_one_ulp_when([&] { return ++calls % 2 == 0; });
  const case_result r = run(small_matmul, b);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "nondeterministic: output 'dst' differs bitwise between two runs on the same "
                                   "inputs in 1 of 20 elements, first at [0,0]"))
      << r.v.reason;
  EXPECT_FALSE(contains(r.v.reason, "not overwritten")) << "a kernel that alternates is not repeatable per pre-fill";
  const case_result allowed = run(std::string(small_matmul) + " dt=f32 deterministic=0", b);
  EXPECT_EQ(allowed.v.st, state::passed) << allowed.v.reason;
}

TEST(memory_checks, accumulating_into_part_of_an_integer_output_is_named_not_overwritten) {
  // Only the last row is accumulated into: an integer output, so no NaN shows it either.
  function_backend b("test", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> s{tensor(out[0].type(), out[0].shape())};
    p.spec().simulate(p, in, s);
    const std::int64_t n = out[0].numel(), cols = out[0].shape().back();
    for (std::int64_t i = 0; i < n; ++i) out[0].set_at(i, (i >= n - cols ? out[0].at(i) : 0.0) + s[0].at(i));
  });
  const case_result r = run("matmul m=4 n=5 k=3 dt=i8:i32:i32", b);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "output not overwritten: element [3,0] of output 'dst' depends on the buffer's "
                                   "previous contents (5 of 20 elements differ"))
      << r.v.reason;
}

TEST(memory_checks, a_kernel_nondeterministic_at_random_is_not_mistaken_for_one_that_reads_its_output) {
  // Differs in one element at every other run, and in another at every third.
  int calls = 0;
  auto b = sim_then([&calls](auto, std::span<tensor> out) {
    ++calls;
    if (calls % 2 == 0) out[0].data_as<float>()[0] = std::nextafter(out[0].data_as<float>()[0], INFINITY);
    if (calls % 3 == 0) out[0].data_as<float>()[1] = std::nextafter(out[0].data_as<float>()[1], INFINITY);
  });
  const case_result r = run(small_matmul, b);
  EXPECT_TRUE(contains(r.v.reason, "nondeterministic: output 'dst'")) << r.v.reason;
  EXPECT_FALSE(contains(r.v.reason, "not overwritten")) << r.v.reason;
}

TEST(memory_checks, thread_counts_must_give_the_same_bits) {
  auto b = sim_off_by_one_ulp_when([] { return omp_get_max_threads() == 7; });
  run_options o;
  EXPECT_EQ(run(small_matmul, b, o).v.st, state::passed);
  o.threads = {1, 7};
  const case_result r = run(small_matmul, b, o);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "nondeterministic across thread counts: output 'dst' with 7 threads differs"))
      << r.v.reason;
  EXPECT_NE(omp_get_max_threads(), 7) << "the thread count is restored";
}

TEST(memory_checks_death, a_kernel_reading_4_kib_past_an_input_crashes_naming_the_guard_and_the_distance) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A is 4x4 f32 = 64 bytes, a multiple of the alignment: no slack, and a read one page past
  // its end used to land beyond a single guard page and pass. In-process this is a crash,
  // which process isolation turns into a CRASH verdict; here the worker's handler is imitated.
  const auto reads_at = [](std::ptrdiff_t offset) {
    return sim_then([offset](std::span<const tensor> in, auto) {
      const volatile std::byte* a = static_cast<const std::byte*>(in[0].data());
      const std::byte read = a[offset];
      (void)read;
    });
  };
  EXPECT_EXIT(
      {
        install_guard_fault_reporter();
        auto b = reads_at(64 + 4096);
        run("matmul m=4 n=5 k=4", b);
        _exit(0);
      },
      testing::ExitedWithCode(3), "guard page after tensor 'A' hit at byte 4096 past its end \\(input 0, 64 bytes\\)");
  EXPECT_EXIT(
      {
        install_guard_fault_reporter();
        auto b = reads_at(-8192);  // two pages before: beyond a single guard page
        run_options before;
        before.guard_at = guard_side::before;
        run("matmul m=4 n=5 k=4", b, before);
        _exit(0);
      },
      testing::ExitedWithCode(3),
      "guard page before tensor 'A' hit at byte 8192 before its start \\(input 0, 64 bytes\\)");
}

// ---------------------------------------------------------------- the misbehaving plugins

case_result run_plugin(const char* path, const std::string& line, const run_options& o = {}) {
  auto b = opval::load_plugin_backend(path);
  return run(line, *b, o);
}

TEST(misbehaving_gemm, correct_plugin_passes) {
  EXPECT_EQ(run_plugin(OPVAL_MISBEHAVING_GEMM_NONE, small_matmul).v.st, state::passed);
}

TEST(misbehaving_gemm, write_past_the_end_into_the_slack_damages_the_canary) {
  // 4x5 f32 = 80 bytes, rounded to 128 by the alignment: the stray element lands in the slack.
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_OOB_WRITE, small_matmul);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "canary after tensor 'dst' overwritten at bytes 0..3 past its end")) << r.v.reason;
  // The guard before the buffer leaves its whole tail page as canaries: caught all the same.
  run_options before;
  before.guard_at = guard_side::before;
  const case_result b = run_plugin(OPVAL_MISBEHAVING_GEMM_OOB_WRITE, "matmul m=4 n=4 k=3", before);
  EXPECT_TRUE(contains(b.v.reason, "canary after tensor 'dst' overwritten at bytes 0..3 past its end")) << b.v.reason;
  // Unaffected cases (m = 1) pass.
  EXPECT_EQ(run_plugin(OPVAL_MISBEHAVING_GEMM_OOB_WRITE, "matmul m=1 n=5 k=3").v.st, state::passed);
}

TEST(misbehaving_gemm_death, write_past_the_end_without_slack_traps_on_the_guard_page) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 4x4 f32 = 64 bytes: the buffer ends at the guard page. In-process this is a crash, which
  // process isolation turns into a verdict; here the worker's handler is imitated.
  EXPECT_EXIT(
      {
        install_guard_fault_reporter();
        run_plugin(OPVAL_MISBEHAVING_GEMM_OOB_WRITE, "matmul m=4 n=4 k=3");
      },
      testing::ExitedWithCode(3), "guard page after tensor 'dst' hit at byte 0 past its end \\(output 0, 64 bytes\\)");
}

TEST(misbehaving_gemm, unwritten_tail_is_counted) {
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_UNWRITTEN_TAIL, small_matmul);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "output 'dst': 5 of 20 elements never written (first at [3,0])")) << r.v.reason;
}

TEST(misbehaving_gemm, written_input_is_named) {
  const case_result r = run_plugin(OPVAL_MISBEHAVING_GEMM_WRITES_INPUT, small_matmul);
  EXPECT_EQ(r.v.st, state::failed);
  EXPECT_TRUE(contains(r.v.reason, "kernel wrote input 'A': 1 of 12 elements changed, first at [0,0]")) << r.v.reason;
}

}  // namespace
