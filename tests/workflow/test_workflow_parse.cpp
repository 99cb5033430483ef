// Parsing and validation errors of workflows: each names file:line:column and gives a hint.
#include <cstdlib>

#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

TEST(WorkflowParse, LoadsTheQuickstartFixtureFromDisk) {
  setenv("HLM_DATA", "/data", 1);
  const Workflow wf = load_workflow(
      std::string(HLM_SOURCE_DIR) + "/tests/workflow/fixtures/quickstart.yaml", {}, test_schema());
  EXPECT_EQ(wf.name, "quickstart");
  EXPECT_EQ(ids_of(wf),
            (std::vector<std::string>{"tokenize", "pretrain[threads=1]", "pretrain[threads=2]"}));
  const auto& tokenize = stage(wf, "tokenize");
  EXPECT_EQ(tokenize.params["dataset"]["dir"], "/data/mitdb");
  EXPECT_EQ(tokenize.params["dataset"]["records"], nlohmann::json({"100", "208"}));
  EXPECT_EQ(tokenize.params["dataset"]["sample_rate_hz"], 360.0);
  EXPECT_EQ(tokenize.params["tokenizer"]["codes"], 64);
  EXPECT_EQ(tokenize.line, 10);
  EXPECT_EQ(tokenize.column, 5);
  EXPECT_EQ(wf.settings["runs_dir"], "runs");
}

TEST(WorkflowParse, ReportsAnUnreadableFileByPath) {
  try {
    load_workflow("/nonexistent/wf.yaml", {}, test_schema());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_CONTAINS(e.what(), "/nonexistent/wf.yaml: cannot read");
  }
}

TEST(WorkflowParse, ReportsYamlSyntaxErrorsWithFileLineAndColumn) {
  const std::string error = error_of("name: x\nstages:\n  - id: [a\n");
  EXPECT_EQ(error.rfind("wf.yaml:4:1: YAML syntax error", 0), 0u) << error;
}

TEST(WorkflowParse, SuggestsTheClosestParamForATypoWithItsLineAndColumn) {
  std::string text = kBasic;
  text.replace(text.find("window: 128"), 6, "windw");
  EXPECT_EQ(error_of(text),
            "wf.yaml:12:7: unknown key 'windw' in params of stage 'pretrain' "
            "(did you mean 'window'?)");
}

TEST(WorkflowParse, SuggestsKeysAtTopLevelAndStageLevel) {
  std::string top = kBasic;
  top.replace(top.find("stages:"), 7, "stags:");
  EXPECT_EQ(error_of(top), "wf.yaml:2:1: unknown top-level key 'stags' (did you mean 'stages'?)");
  std::string in_stage = kBasic;
  in_stage.replace(in_stage.find("needs:"), 6, "need:");
  EXPECT_EQ(error_of(in_stage),
            "wf.yaml:10:5: unknown key 'need' in stage 'pretrain' (did you mean 'needs'?)");
}

TEST(WorkflowParse, ListsTheKnownKeysWhenNoneIsClose) {
  std::string text = kBasic;
  text.replace(text.find("window: 128"), 6, "zzzzzzzzzz");
  EXPECT_CONTAINS(error_of(text), "(expected one of: model, window, lr, threads");
}

TEST(WorkflowParse, RejectsUnknownKeysInsideNestedPluginBlocks) {
  std::string text = kBasic;
  text.replace(text.find("{plugin: beat-vq}"), 17, "{plugin: beat-vq, codez: 32}");
  EXPECT_EQ(error_of(text),
            "wf.yaml:7:36: unknown key 'codez' in 'tokenizer' in params of stage "
            "'tokenize' (tokenizer plugin 'beat-vq') (did you mean 'codes'?)");
}

TEST(WorkflowParse, ReportsWrongTypesWithTheExpectedType) {
  std::string text = kBasic;
  text.replace(text.find("window: 128"), 11, "window: two");
  EXPECT_EQ(error_of(text),
            "wf.yaml:12:15: wrong type for 'window' in params of stage 'pretrain': "
            "expected an int, got 'two'");
  text = kBasic;
  text.replace(text.find("window: 128"), 11, "causal: maybe");
  EXPECT_CONTAINS(error_of(text), "expected a bool, got 'maybe' (write true or false)");
  text = kBasic;
  text.replace(text.find("window: 128"), 11, "window: \"128\"");
  EXPECT_CONTAINS(error_of(text), "expected an int, got '128' (a quoted string)");
  text = kBasic;
  text.replace(text.find("window: 128"), 11, "window: [1]");
  EXPECT_CONTAINS(error_of(text), "expected an int, got a list");
  // A choice names its words; a word outside them fails at load, not when the stage runs.
  text = kBasic;
  text.replace(text.find("window: 128"), 11, "precision: fp16");
  EXPECT_EQ(error_of(text),
            "wf.yaml:12:18: wrong type for 'precision' in params of stage 'pretrain': "
            "expected one of fp32, bf16, got 'fp16'");
}

TEST(WorkflowParse, ReportsMissingRequiredParamsWithTheirHelp) {
  std::string text = kBasic;
  text.replace(text.find("      tokenizer: {plugin: beat-vq}\n"), 35, "");
  EXPECT_EQ(error_of(text),
            "wf.yaml:6:7: missing required key 'tokenizer' in params of stage "
            "'tokenize' (tokenizer plugin block)");
  text = kBasic;
  text.replace(text.find(", dir: /data/mitdb"), 18, "");
  EXPECT_CONTAINS(error_of(text), "wf.yaml:6:16: missing required key 'dir' in 'dataset'");
}

TEST(WorkflowParse, ReportsABlockWithoutItsPluginName) {
  std::string text = kBasic;
  text.replace(text.find("{plugin: beat-vq}"), 17, "{codes: 32}");
  EXPECT_EQ(error_of(text),
            "wf.yaml:7:18: missing key 'plugin' in 'tokenizer' in params of stage "
            "'tokenize' (expected one of: beat-vq)");
}

TEST(WorkflowParse, ReportsAnUnknownStageKindWithASuggestion) {
  std::string text = kBasic;
  text.replace(text.find("kind: pretrain"), 14, "kind: pretrian");
  EXPECT_EQ(error_of(text),
            "wf.yaml:9:11: unknown stage kind 'pretrian' in stage 'pretrain' "
            "(did you mean 'pretrain'?)");
}

TEST(WorkflowParse, ReportsAnUnknownPluginWithASuggestion) {
  std::string text = kBasic;
  text.replace(text.find("plugin: wfdb"), 12, "plugin: wfbd");
  EXPECT_EQ(error_of(text),
            "wf.yaml:6:25: unknown dataset plugin 'wfbd' in 'dataset' in params of "
            "stage 'tokenize' (did you mean 'wfdb'?)");
}

TEST(WorkflowParse, RejectsDuplicateStageIdsNamingTheFirst) {
  std::string text = kBasic;
  text.replace(text.find("id: pretrain"), 12, "id: tokenize");
  text.replace(text.find("needs: [tokenize]"), 17, "needs: []");
  EXPECT_EQ(error_of(text),
            "wf.yaml:8:9: duplicate stage id 'tokenize' (first at wf.yaml:3:5; ids "
            "must be unique)");
}

TEST(WorkflowParse, RejectsDuplicateYamlKeys) {
  std::string text = kBasic;
  text.replace(text.find("window: 128"), 11, "window: 128\n      window: 64");
  EXPECT_EQ(error_of(text), "wf.yaml:13:7: duplicate key 'window' (first at wf.yaml:12:7)");
}

TEST(WorkflowParse, FillsDefaultsIncludingDefaultPluginBlocks) {
  const Workflow wf = load(kBasic);
  const auto& pretrain = stage(wf, "pretrain");
  EXPECT_EQ(pretrain.params["model"],
            nlohmann::json({{"plugin", "gpt"}, {"layers", 2}, {"d_model", 64}}));
  EXPECT_EQ(pretrain.params["window"], 128);
  EXPECT_EQ(pretrain.params["lr"], 0.001);
  EXPECT_TRUE(pretrain.params["resume_from"].is_null());
  EXPECT_EQ(stage(wf, "tokenize").params["threads"], 1);
}

TEST(WorkflowParse, GivesFloatParamsFloatValuesEvenWhenWrittenAsInts) {
  std::string text = kBasic;
  text.replace(text.find("window: 128"), 11, "lr: 1");
  const Workflow wf = load(text);
  const auto& lr = stage(wf, "pretrain").params["lr"];
  EXPECT_TRUE(lr.is_number_float());
  EXPECT_EQ(lr, 1.0);
}

TEST(WorkflowParse, ChecksEachBlockOfAListOfPluginBlocks) {
  const std::string text = R"(name: ev
stages:
  - id: eval
    kind: evaluate
    params:
      datasets:
        - {plugin: wfdb, dir: /a}
        - {plugin: csv, paht: /b.csv}
)";
  EXPECT_EQ(error_of(text),
            "wf.yaml:8:25: unknown key 'paht' in 'datasets' in params of stage "
            "'eval' item 2 (dataset plugin 'csv') (did you mean 'path'?)");
}

TEST(WorkflowParse, RejectsAnEmptyWorkflowAndABadName) {
  EXPECT_CONTAINS(error_of(""), "wf.yaml:1:1: the workflow is empty");
  std::string text = kBasic;
  text.replace(0, 11, "name: Basic");
  EXPECT_EQ(error_of(text), "wf.yaml:1:7: workflow name 'Basic' must match [a-z0-9_-]+");
  EXPECT_CONTAINS(error_of("name: x\nstages: []\n"),
                  "wf.yaml:2:9: 'stages' must be a non-empty list");
}

TEST(WorkflowParse, ChecksSettingsKeysTypesAndPortRange) {
  const std::string base = std::string(kBasic) + "settings:\n";
  EXPECT_EQ(error_of(base + "  metrics_prot: 1\n"),
            "wf.yaml:14:3: unknown key 'metrics_prot' in settings (did you mean 'metrics_port'?)");
  EXPECT_CONTAINS(error_of(base + "  metrics_port: many\n"),
                  "wf.yaml:14:17: wrong type for 'metrics_port' in settings");
  // Declared nowhere else and read by nothing, so refused rather than silently ignored.
  EXPECT_CONTAINS(error_of(base + "  threads: 2\n"),
                  "wf.yaml:14:3: unknown key 'threads' in settings");
  EXPECT_EQ(error_of(base + "  metrics_port: 70000\n"),
            "wf.yaml:14:17: metrics_port 70000 is not a port (0 picks a free one; else 1-65535)");
  EXPECT_EQ(load(base + "  metrics_port: 9100\n").settings["metrics_port"], 9100);
}

}  // namespace
}  // namespace hlm::workflow::test_support
