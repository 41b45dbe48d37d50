// The one repro renderer (render_repro, opval/runner.hpp): a case identity as `opval repro`,
// `opval judge`, `python -m opval run` or an `opval.check(...)` call, with every option that
// differs from its default and every path quoted. tests/cpp/test_plugin.cpp pastes a repro with
// a plugin path holding a space and a quote into a shell and sees the same case fail again.
#include <gtest/gtest.h>

#include <string>

#include "opval/runner.hpp"

namespace {

using namespace opval;

case_identity matmul_on(const std::string& backend, const run_options& o = {}, const backend_ref& made_from = {}) {
  return identify(parse_problem("matmul m=4 n=5 k=3 dt=bf16"), backend, o, "test", made_from);
}

TEST(render_repro, a_default_case_names_descriptor_seed_backend_and_policy) {
  EXPECT_EQ(render_repro(matmul_on("onednn")),
            "opval repro 'matmul m=4 n=5 k=3 dt=bf16:f32:bf16' --seed 1 --backend onednn --policy bound:false_alarm=1e-06");
}

TEST(render_repro, every_case_option_off_its_default_is_said_in_the_option_tables_order) {
  run_options o;
  o.seed = 9;
  o.pol = parse_policy("exact");
  o.worst_k = 2;
  o.perturb_check = false;
  o.guard_at = guard_side::before;
  o.threads = {2, 1};
  o.leak_check = 3;
  o.input_check = false;
  EXPECT_EQ(render_repro(matmul_on("sim", o)),
            "opval repro 'matmul m=4 n=5 k=3 dt=bf16:f32:bf16' --seed 9 --backend sim --policy exact --worst 2 "
            "--no-perturb --leak-check 3 --guard-before --no-input-check --threads 2,1");
  EXPECT_EQ(render_repro(matmul_on("python:mine", o), repro_style::python_check, {.backend = "mine", .keywords = "arrays='torch'"}),
            "opval.check('matmul', mine, problems=['matmul m=4 n=5 k=3 dt=bf16:f32:bf16'], policy='exact', seed=9, "
            "worst=2, perturb=False, leak_check=3, guard_before=True, input_check=False, threads=[2, 1], "
            "arrays='torch', verbose=True)");
}

TEST(render_repro, a_plugin_is_named_by_its_path_quoted_for_the_shell) {
  const case_identity id = matmul_on("plugin:tiled", {}, {"", "/tmp/my plugins/it's.so"});
  EXPECT_EQ(render_repro(id), "opval repro 'matmul m=4 n=5 k=3 dt=bf16:f32:bf16' --seed 1 --plugin "
                              "'/tmp/my plugins/it'\\''s.so' --policy bound:false_alarm=1e-06");
}

TEST(render_repro, a_reference_a_checker_and_python_names_are_kept) {
  case_identity id = matmul_on("sim");
  id.reference = "plugin:ref";
  id.reference_from = {"", "/opt/ref.so"};
  id.under = "valgrind";
  EXPECT_EQ(render_repro(id), "opval repro 'matmul m=4 n=5 k=3 dt=bf16:f32:bf16' --seed 1 --backend sim --policy "
                              "bound:false_alarm=1e-06 --reference /opt/ref.so --under valgrind");
  EXPECT_EQ(render_repro(matmul_on("torch"), repro_style::python_run, {.backend = "torch", .reference = "jax"}),
            "python -m opval run --backend torch --problems 'matmul m=4 n=5 k=3 dt=bf16:f32:bf16' --reference jax -v");
}

TEST(render_repro, a_judged_case_is_the_judge_command_on_its_files) {
  case_identity id = identify(parse_problem("cast shape=8 dt=f32:f32:bf16"), "judge", {}, "files");
  id.input_files = {"x.npy"};
  id.output_files = {"y out.npy"};
  EXPECT_EQ(render_repro(id), "opval judge 'cast shape=8 dt=f32:f32:bf16' --inputs 'x.npy' --outputs 'y out.npy' "
                              "--policy bound:false_alarm=1e-06");
}

}  // namespace
