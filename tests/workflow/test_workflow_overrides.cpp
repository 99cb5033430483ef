// key=value overrides from the command line: nested keys, YAML values, and errors naming the
// override with a suggestion.
#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

const char* const kSwept = R"(name: sweep
vars:
  records: ["100"]
stages:
  - id: tokenize
    kind: tokenize
    params:
      dataset: {plugin: wfdb, dir: /d, records: "${vars.records}"}
      tokenizer: {plugin: beat-vq}
  - id: pretrain
    kind: pretrain
    needs: [tokenize]
    matrix: {threads: [1, 2]}
)";

TEST(WorkflowOverrides, SetsAStageParam) {
  const Workflow wf = load(kBasic, {"pretrain.window=64", "tokenize.threads=3"});
  EXPECT_EQ(stage(wf, "pretrain").params["window"], 64);
  EXPECT_EQ(stage(wf, "tokenize").params["threads"], 3);
}

TEST(WorkflowOverrides, SetsANestedPluginParam) {
  const Workflow wf = load(kBasic, {"tokenize.tokenizer.codes=32", "pretrain.model.layers=6"});
  EXPECT_EQ(stage(wf, "tokenize").params["tokenizer"]["codes"], 32);
  EXPECT_EQ(stage(wf, "pretrain").params["model"]["layers"], 6);
  EXPECT_EQ(stage(wf, "pretrain").params["model"]["plugin"], "gpt");
}

TEST(WorkflowOverrides, ParsesValuesAsYamlSoFlowListsWork) {
  const Workflow wf = load(kSwept, {"vars.records=[\"100\", 208]", "tokenize.dataset.dir=/x y"});
  EXPECT_EQ(stage(wf, "tokenize").params["dataset"]["records"], nlohmann::json({"100", 208}));
  EXPECT_EQ(stage(wf, "tokenize").params["dataset"]["dir"], "/x y");
  EXPECT_EQ(wf.vars["records"], nlohmann::json({"100", 208}));
}

TEST(WorkflowOverrides, SetsSettingsAndTheName) {
  const Workflow wf = load(kBasic, {"settings.metrics_port=9100", "name=other"});
  EXPECT_EQ(wf.settings["metrics_port"], 9100);
  EXPECT_EQ(wf.name, "other");
}

TEST(WorkflowOverrides, OverridingASweptParamReplacesTheSweep) {
  const Workflow wf = load(kSwept, {"pretrain.threads=4"});
  EXPECT_EQ(ids_of(wf), (std::vector<std::string>{"tokenize", "pretrain"}));
  EXPECT_EQ(stage(wf, "pretrain").params["threads"], 4);
}

TEST(WorkflowOverrides, SetsAMatrixReplacingAPlainParam) {
  const Workflow wf = load(kBasic, {"pretrain.matrix.window=[32,64]"});
  EXPECT_EQ(ids_of(wf),
            (std::vector<std::string>{"tokenize", "pretrain[window=32]", "pretrain[window=64]"}));
}

TEST(WorkflowOverrides, ReportsAnUnknownStageWithASuggestion) {
  EXPECT_EQ(error_of(kBasic, {"pretrian.window=64"}),
            "override 'pretrian.window=64': unknown stage 'pretrian' (did you mean 'pretrain'?)");
}

TEST(WorkflowOverrides, ReportsAnUnknownParamWithASuggestion) {
  EXPECT_EQ(error_of(kBasic, {"pretrain.windw=64"}),
            "override 'pretrain.windw=64': unknown parameter 'windw' of stage 'pretrain' (kind "
            "pretrain) (did you mean 'window'?)");
}

TEST(WorkflowOverrides, ReportsAnUnknownNestedKeyNamingTheOverride) {
  EXPECT_EQ(error_of(kBasic, {"tokenize.tokenizer.codez=32"}),
            "override 'tokenize.tokenizer.codez=32': unknown key 'codez' in 'tokenizer' in params "
            "of stage 'tokenize' (tokenizer plugin 'beat-vq') (did you mean 'codes'?)");
}

TEST(WorkflowOverrides, ReportsAWrongTypeNamingTheOverride) {
  EXPECT_EQ(error_of(kBasic, {"pretrain.window=[1,2]"}),
            "override 'pretrain.window=[1,2]': wrong type for 'window' in params of stage "
            "'pretrain': expected an int, got a list");
}

TEST(WorkflowOverrides, ReportsAnUnknownVarAndSetting) {
  EXPECT_EQ(error_of(kSwept, {"vars.record=[1]"}),
            "override 'vars.record=[1]': unknown var 'record' (did you mean 'records'?)");
  EXPECT_EQ(error_of(kBasic, {"settings.runs_dri=x"}),
            "override 'settings.runs_dri=x': unknown key 'runs_dri' in settings (did you mean "
            "'runs_dir'?)");
}

TEST(WorkflowOverrides, RejectsMalformedOverrides) {
  EXPECT_CONTAINS(error_of(kBasic, {"pretrain.window"}),
                  "override 'pretrain.window': expected key=value");
  EXPECT_CONTAINS(error_of(kBasic, {"pretrain..window=1"}), "empty name in 'pretrain..window'");
  EXPECT_CONTAINS(error_of(kBasic, {"pretrain.window=[1"}),
                  "override 'pretrain.window=[1': YAML syntax error");
  EXPECT_CONTAINS(error_of(kBasic, {"pretrain.window.x=1"}),
                  "'window' is '128', not a block, so 'window.x' cannot be set");
}

}  // namespace
}  // namespace hlm::workflow::test_support
