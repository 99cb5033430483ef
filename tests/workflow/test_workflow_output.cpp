// Canonical JSON for cache keys, the resolved YAML of a run, and the dry-run plan.
#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

TEST(WorkflowCanonical, SortsKeysWhateverTheInsertionOrder) {
  nlohmann::json a, b;
  a["z"] = 1;
  a["a"] = {{"y", 2.5}, {"b", "x"}};
  b["a"] = {{"b", "x"}, {"y", 2.5}};
  b["z"] = 1;
  EXPECT_EQ(canonical_json(a), R"({"a":{"b":"x","y":2.5},"z":1})");
  EXPECT_EQ(canonical_json(a), canonical_json(b));
}

TEST(WorkflowCanonical, GivesTheSameParamsForEquivalentWorkflowsWrittenDifferently) {
  const Workflow one = load(R"(name: a
stages:
  - id: pretrain
    kind: pretrain
    params: {lr: 1, window: 128, model: {plugin: gpt, layers: 2}}
)");
  const Workflow two = load(R"(name: a
stages:
  - kind: pretrain
    params:
      window: 128
      lr: 1.0
    id: pretrain
)");
  EXPECT_EQ(canonical_json(one.stages[0].params), canonical_json(two.stages[0].params));
  EXPECT_NE(canonical_json(one.stages[0].params), canonical_json(load(kBasic).stages[1].params));
}

TEST(WorkflowResolvedYaml, LoadsBackToTheSameInstances) {
  setenv("HLM_DATA", "/data", 1);
  const Workflow first = load_workflow(
      std::string(HLM_SOURCE_DIR) + "/tests/workflow/fixtures/quickstart.yaml",
      {"tokenize.tokenizer.codes=32", "pretrain.matrix.window=[8, 16]"}, test_schema());
  const Workflow second = load(first.resolved_yaml());
  ASSERT_EQ(ids_of(first), ids_of(second));
  EXPECT_EQ(ids_of(first).size(), 5u);
  for (size_t i = 0; i < first.stages.size(); ++i) {
    EXPECT_EQ(canonical_json(first.stages[i].params), canonical_json(second.stages[i].params));
    EXPECT_EQ(first.stages[i].needs, second.stages[i].needs);
    EXPECT_EQ(first.stages[i].matrix_values, second.stages[i].matrix_values);
  }
  EXPECT_EQ(first.settings, second.settings);
  EXPECT_EQ(first.vars, second.vars);
  EXPECT_EQ(second.resolved_yaml(), first.resolved_yaml());
}

TEST(WorkflowResolvedYaml, KeepsStringsThatLookLikeNumbersAndLiteralReferences) {
  const Workflow wf = load(R"(name: s
vars:
  records: ["100", 208]
  note: "$${literal}"
stages:
  - id: tokenize
    kind: tokenize
    params:
      dataset: {plugin: wfdb, dir: "/d/$${x}", records: "${vars.records}"}
      tokenizer: {plugin: beat-vq}
)");
  const Workflow again = load(wf.resolved_yaml());
  EXPECT_EQ(again.vars["records"], nlohmann::json({"100", 208}));
  EXPECT_EQ(again.vars["note"], "${literal}");
  EXPECT_EQ(again.stages[0].params["dataset"]["dir"], "/d/${x}");
}

TEST(WorkflowPlan, ListsStagesInOrderWithNeedsMatrixPluginsAndParams) {
  const Workflow wf = load(kBasic, {"pretrain.matrix.threads=[1,2]"});
  const std::string plan = dry_run_plan(wf);
  EXPECT_CONTAINS(plan, "workflow basic (wf.yaml): 3 stage instances\n");
  EXPECT_CONTAINS(plan,
                  "1. tokenize (kind tokenize)\n   needs:   -\n"
                  "   plugins: dataset=wfdb, tokenizer=beat-vq\n");
  EXPECT_CONTAINS(plan, "     dataset.dir = \"/data/mitdb\"\n");
  EXPECT_CONTAINS(plan,
                  "3. pretrain[threads=2] (kind pretrain)\n   needs:   tokenize\n"
                  "   matrix:  threads=2\n   plugins: model=gpt\n");
  EXPECT_CONTAINS(plan, "     threads = 2\n");
  EXPECT_EQ(plan.find("cache:"), std::string::npos);
}

TEST(WorkflowPlan, AsksForCacheKeysInOrderPassingTheKeysOfNeededStages) {
  const Workflow wf = load(kBasic, {"pretrain.matrix.threads=[1,2]"});
  std::vector<std::string> seen;
  const std::string plan = dry_run_plan(
      wf, [&](const StageInstance& s, const std::map<std::string, std::string>& needed) {
        std::string key = s.id;
        for (const auto& [id, k] : needed) key += "<" + id + "=" + k + ">";
        seen.push_back(s.id);
        return PlannedCache{key, s.id == "tokenize" ? "reused from somewhere" : ""};
      });
  EXPECT_EQ(seen, ids_of(wf));
  EXPECT_CONTAINS(plan, "   cache:   tokenize\n   reuse:   reused from somewhere\n");
  EXPECT_CONTAINS(plan, "   cache:   pretrain[threads=2]<tokenize=tokenize>\n");
}

TEST(WorkflowSchema, MakesADeclarationWithoutDefaultRequired) {
  const hlm_param_decl required{"dir", "string", nullptr, "folder"};
  const hlm_param_decl optional{"codes", "int", "64", "codebook size"};
  EXPECT_TRUE(from_decl(required).required);
  EXPECT_FALSE(from_decl(optional).required);
  EXPECT_EQ(from_decl(optional).default_json, "64");
  EXPECT_EQ(from_decl(optional).help, "codebook size");
}

TEST(WorkflowSchema, RefusesDuplicatesAndMalformedDeclarations) {
  Schema schema = test_schema();
  EXPECT_THROW(schema.add_plugin("dataset", "wfdb", {}), PluginError);
  EXPECT_THROW(schema.add_stage_kind("pretrain", {}), InternalError);
  EXPECT_THROW(schema.add_plugin("model", "bad", {{"x", "integer", "1", "", false}}), PluginError);
  EXPECT_THROW(schema.add_plugin("model", "bad", {{"x", "int", "\"1\"", "", false}}), PluginError);
  EXPECT_THROW(schema.add_plugin("model", "bad", {{"x", "int", "{", "", false}}), PluginError);
  EXPECT_THROW(schema.add_plugin("model", "bad", {{"plugin", "string", "", "", true}}),
               PluginError);
  EXPECT_NO_THROW(schema.add_plugin("model", "ok", {{"x", "list:int", "[1, 2]", "", false}}));
}

}  // namespace
}  // namespace hlm::workflow::test_support
