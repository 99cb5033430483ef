// Stage order, needs and matrix expansion.
#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

// Stages whose only params are a pretrain window; needs given per stage.
std::string chain(const std::vector<std::pair<std::string, std::string>>& stages) {
  std::string text = "name: dag\nstages:\n";
  for (const auto& [id, needs] : stages)
    text += "  - id: " + id + "\n    kind: pretrain\n    needs: [" + needs + "]\n";
  return text;
}

TEST(WorkflowDag, OrdersStagesTopologicallyKeepingFileOrderForTies) {
  const Workflow wf = load(chain({{"report", "eval_a, eval_b"},
                                  {"eval_b", "train"},
                                  {"eval_a", "train"},
                                  {"train", "prep"},
                                  {"prep", ""},
                                  {"lonely", ""}}));
  EXPECT_EQ(ids_of(wf),
            (std::vector<std::string>{"prep", "train", "eval_b", "eval_a", "report", "lonely"}));
  EXPECT_EQ(stage(wf, "report").needs, (std::vector<std::string>{"eval_a", "eval_b"}));
}

TEST(WorkflowDag, ReportsAnUnknownNeedWithASuggestionAtItsLine) {
  EXPECT_EQ(error_of(chain({{"prep", ""}, {"train", "prepp"}})),
            "wf.yaml:8:13: unknown stage 'prepp' in needs of stage 'train' (did you mean 'prep'?)");
}

TEST(WorkflowDag, NamesTheCycleInNeeds) {
  EXPECT_EQ(error_of(chain({{"a", "c"}, {"b", "a"}, {"c", "b"}, {"d", ""}})),
            "wf.yaml:5:13: cycle in needs: a -> c -> b -> a (a stage cannot depend on itself, "
            "directly or not)");
}

TEST(WorkflowDag, NamesAStageThatNeedsItselfAsACycle) {
  EXPECT_CONTAINS(error_of(chain({{"a", ""}, {"b", "a, b"}})),
                  "wf.yaml:8:16: cycle in needs: b -> b");
}

TEST(WorkflowDag, ExpandsAMatrixIntoOneInstancePerCombinationInSortedKeyOrder) {
  const Workflow wf = load(R"(name: sweep
stages:
  - id: pretrain
    kind: pretrain
    matrix:
      world_size: [1, 2]
      threads: [4, 8]
      lr: [0.5]
)");
  EXPECT_EQ(ids_of(wf), (std::vector<std::string>{"pretrain[lr=0.5,threads=4,world_size=1]",
                                                  "pretrain[lr=0.5,threads=4,world_size=2]",
                                                  "pretrain[lr=0.5,threads=8,world_size=1]",
                                                  "pretrain[lr=0.5,threads=8,world_size=2]"}));
  const auto& last = wf.stages.back();
  EXPECT_EQ(last.base_id, "pretrain");
  EXPECT_EQ(last.matrix_values, nlohmann::json({{"lr", 0.5}, {"threads", 8}, {"world_size", 2}}));
  EXPECT_EQ(last.params["threads"], 8);
  EXPECT_EQ(last.params["window"], 256);
}

// An instance id names the stage's folder in the run directory: a swept string value with a
// '/' cannot place it elsewhere (the value itself reaches the params unchanged).
TEST(WorkflowDag, ASweptStringCannotPutTheStageFolderOutsideTheRun) {
  const Workflow wf = load(R"(name: sweep
stages:
  - id: pretrain
    kind: pretrain
    matrix:
      resume_from: ["../../../tmp/x", "/etc"]
)");
  EXPECT_EQ(ids_of(wf), (std::vector<std::string>{"pretrain[resume_from=.._.._.._tmp_x]",
                                                  "pretrain[resume_from=_etc]"}));
  EXPECT_EQ(wf.stages.front().params["resume_from"], "../../../tmp/x");
}

TEST(WorkflowDag, AStageNeedingAMatrixStageNeedsAllItsInstances) {
  const Workflow wf = load(R"(name: sweep
stages:
  - id: report
    kind: pretrain
    needs: [pretrain]
  - id: pretrain
    kind: pretrain
    matrix: {threads: [1, 2]}
)");
  EXPECT_EQ(ids_of(wf),
            (std::vector<std::string>{"pretrain[threads=1]", "pretrain[threads=2]", "report"}));
  EXPECT_EQ(stage(wf, "report").needs,
            (std::vector<std::string>{"pretrain[threads=1]", "pretrain[threads=2]"}));
}

TEST(WorkflowDag, SweepsANestedPluginParamWithADottedKey) {
  std::string text = kBasic;
  text += "    matrix:\n      model.layers: [2, 4]\n";
  const Workflow wf = load(text);
  EXPECT_EQ(ids_of(wf)[2], "pretrain[model.layers=4]");
  EXPECT_EQ(stage(wf, "pretrain[model.layers=4]").params["model"]["layers"], 4);
  EXPECT_EQ(stage(wf, "pretrain[model.layers=4]").params["model"]["d_model"], 64);
}

TEST(WorkflowDag, RejectsAParamSetBothInParamsAndInTheMatrix) {
  std::string text = kBasic;
  text += "    matrix:\n      window: [64, 128]\n";
  EXPECT_EQ(error_of(text),
            "wf.yaml:14:7: 'window' of stage 'pretrain' is both in params and in "
            "matrix (keep one; an override of either replaces the other)");
}

TEST(WorkflowDag, RejectsAnUnknownMatrixParamAndAnEmptyList) {
  std::string text = kBasic;
  EXPECT_EQ(error_of(text + "    matrix:\n      thread: [1]\n"),
            "wf.yaml:14:7: unknown parameter 'thread' in matrix of stage 'pretrain' (did you mean "
            "'threads'?)");
  EXPECT_CONTAINS(
      error_of(text + "    matrix:\n      threads: []\n"),
      "wf.yaml:14:16: matrix entry 'threads' of stage 'pretrain' must be a non-empty list");
  EXPECT_CONTAINS(error_of(text + "    matrix:\n      threads: [1, 1]\n"),
                  "gives instance 'pretrain[threads=1]' twice");
}

TEST(WorkflowDag, ReportsAMatrixValueOfTheWrongTypeAtItsOwnLine) {
  std::string text = kBasic;
  text += "    matrix:\n      threads:\n        - 1\n        - two\n";
  EXPECT_EQ(error_of(text),
            "wf.yaml:16:11: wrong type for 'threads' in params of stage 'pretrain': "
            "expected an int, got 'two'");
}

}  // namespace
}  // namespace hlm::workflow::test_support
