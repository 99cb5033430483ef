// ${vars.x} and ${env.X} substitution: typed when a reference is the whole value, text inside
// a longer value, and errors at the line of the reference.
#include <cstdlib>

#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

// A tokenize stage whose dataset and tokenizer lines are given.
std::string with_vars(const std::string& vars, const std::string& dataset,
                      const std::string& tokenizer = "{plugin: beat-vq}") {
  return "name: interp\nvars:\n" + vars + "stages:\n  - id: tokenize\n    kind: tokenize\n" +
         "    params:\n      dataset: " + dataset + "\n      tokenizer: " + tokenizer + "\n";
}

TEST(WorkflowInterpolation, SubstitutesAWholeScalarVarKeepingItsType) {
  const Workflow wf = load(with_vars("  records: [\"100\", 208]\n  codes: 32\n",
                                     R"({plugin: wfdb, dir: /d, records: "${vars.records}"})",
                                     R"({plugin: beat-vq, codes: "${vars.codes}"})"));
  const auto& params = wf.stages[0].params;
  EXPECT_EQ(params["dataset"]["records"], nlohmann::json({"100", 208}));
  EXPECT_EQ(params["tokenizer"]["codes"], 32);
  EXPECT_EQ(wf.vars["codes"], 32);
}

TEST(WorkflowInterpolation, SubstitutesVarsInsideLongerTextAsText) {
  const Workflow wf = load(with_vars("  root: /data\n  db: mitdb\n",
                                     R"({plugin: wfdb, dir: "${vars.root}/${vars.db}/v1"})"));
  EXPECT_EQ(wf.stages[0].params["dataset"]["dir"], "/data/mitdb/v1");
}

TEST(WorkflowInterpolation, SubstitutesEnvVarsTypedByTheParam) {
  setenv("HLM_TEST_ROOT", "/scratch", 1);
  setenv("HLM_TEST_CODES", "128", 1);
  const Workflow wf =
      load(with_vars("  unused: 1\n", R"({plugin: wfdb, dir: "${env.HLM_TEST_ROOT}/mitdb"})",
                     R"({plugin: beat-vq, codes: "${env.HLM_TEST_CODES}"})"));
  EXPECT_EQ(wf.stages[0].params["dataset"]["dir"], "/scratch/mitdb");
  EXPECT_EQ(wf.stages[0].params["tokenizer"]["codes"], 128);
}

TEST(WorkflowInterpolation, LetsVarsReferToOtherVarsAndEnvInAnyOrder) {
  setenv("HLM_TEST_ROOT", "/scratch", 1);
  const Workflow wf =
      load(with_vars("  dir: \"${vars.root}/mitdb\"\n  root: \"${env.HLM_TEST_ROOT}\"\n",
                     R"({plugin: wfdb, dir: "${vars.dir}"})"));
  EXPECT_EQ(wf.stages[0].params["dataset"]["dir"], "/scratch/mitdb");
  EXPECT_EQ(wf.vars["dir"], "/scratch/mitdb");
}

TEST(WorkflowInterpolation, ReachesIntoMapAndListVarsWithDottedPaths) {
  const Workflow wf =
      load(with_vars("  db: {dirs: [/a, /b]}\n", R"({plugin: wfdb, dir: "${vars.db.dirs.1}"})"));
  EXPECT_EQ(wf.stages[0].params["dataset"]["dir"], "/b");
}

TEST(WorkflowInterpolation, ReportsAnUnknownVarAtItsLineWithASuggestion) {
  EXPECT_EQ(error_of(with_vars("  root: /data\n", R"({plugin: wfdb, dir: "${vars.rot}/x"})")),
            "wf.yaml:8:36: unknown var 'rot' in ${vars.rot} (did you mean 'root'?)");
}

TEST(WorkflowInterpolation, ReportsAnUnsetEnvVarAtItsLine) {
  unsetenv("HLM_TEST_UNSET");
  EXPECT_EQ(error_of(with_vars("  a: 1\n", R"({plugin: wfdb, dir: "${env.HLM_TEST_UNSET}"})")),
            "wf.yaml:8:36: environment variable 'HLM_TEST_UNSET' is not set (export it, or "
            "override the value on the command line)");
}

TEST(WorkflowInterpolation, ReportsACycleBetweenVars) {
  EXPECT_CONTAINS(
      error_of(with_vars("  a: \"${vars.b}\"\n  b: \"x${vars.a}\"\n", "{plugin: wfdb, dir: /d}")),
      "wf.yaml:4:6: cycle in vars: a -> b -> a");
}

TEST(WorkflowInterpolation, RejectsAListVarInsideText) {
  EXPECT_CONTAINS(error_of(with_vars("  l: [1, 2]\n", R"({plugin: wfdb, dir: "/d/${vars.l}"})")),
                  "wf.yaml:8:36: ${vars.l} is a list and cannot be placed inside text");
}

TEST(WorkflowInterpolation, ReportsAWrongTypeFromAVarAtTheUseSite) {
  EXPECT_EQ(error_of(with_vars("  codes: lots\n", "{plugin: wfdb, dir: /d}",
                               R"({plugin: beat-vq, codes: "${vars.codes}"})")),
            "wf.yaml:9:43: wrong type for 'codes' in 'tokenizer' in params of stage 'tokenize' "
            "(tokenizer plugin 'beat-vq'): expected an int, got 'lots'");
}

TEST(WorkflowInterpolation, KeepsDollarDollarBraceAsALiteral) {
  const Workflow wf = load(with_vars("  a: 1\n", R"({plugin: wfdb, dir: "/d/$${HOME}"})"));
  EXPECT_EQ(wf.stages[0].params["dataset"]["dir"], "/d/${HOME}");
}

TEST(WorkflowInterpolation, RejectsUnknownAndUnterminatedReferences) {
  EXPECT_CONTAINS(error_of(with_vars("  a: 1\n", R"({plugin: wfdb, dir: "${var.a}"})")),
                  "unknown reference '${var.a}' (write ${vars.<name>} or ${env.<NAME>}");
  EXPECT_CONTAINS(error_of(with_vars("  a: 1\n", R"({plugin: wfdb, dir: "${vars.a"})")),
                  "unterminated '${' in '${vars.a'");
}

}  // namespace
}  // namespace hlm::workflow::test_support
