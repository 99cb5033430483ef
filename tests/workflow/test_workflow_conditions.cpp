// Stage conditions (`when:`): a stage runs only when the files it names exist; otherwise it is
// left out with its reason, and so is every stage that needs it.
#include <filesystem>
#include <fstream>

#include "workflow_test_schema.h"

namespace hlm::workflow::test_support {
namespace {

namespace fs = std::filesystem;

// A folder holding the named empty files, removed at the end of the test.
struct Folder {
  fs::path path;
  explicit Folder(const std::vector<std::string>& files) {
    path = fs::temp_directory_path() /
           ("hlm_when_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
    for (const auto& f : files) std::ofstream(path / f).put('\n');
  }
  ~Folder() { fs::remove_all(path); }
};

// prep -> train -> report, with report also needing a test-set stage guarded by `when`.
std::string guarded(const std::string& dir, const std::string& names = "[\"a\", \"b\"]") {
  return R"(name: guarded
vars:
  test_dir: ")" +
         dir + R"("
  test_records: )" +
         names + R"(
stages:
  - id: prep
    kind: pretrain
  - id: test_set
    kind: pretrain
    needs: [prep]
    when:
      files_exist: {dir: "${vars.test_dir}", names: "${vars.test_records}", suffix: .hea}
  - id: report
    kind: pretrain
    needs: [test_set]
  - id: train
    kind: pretrain
    needs: [prep]
)";
}

TEST(WorkflowConditions, AStageRunsWhenEveryFileItNamesExists) {
  const Folder folder({"a.hea", "b.hea"});
  const Workflow wf = load(guarded(folder.path.string()));
  EXPECT_EQ(ids_of(wf), (std::vector<std::string>{"prep", "test_set", "report", "train"}));
  EXPECT_TRUE(wf.left_out.empty());
}

TEST(WorkflowConditions, WithNoneOfItsFilesTheStageAndThoseNeedingItAreLeftOutWithTheReason) {
  const Folder folder({"other.hea"});
  const Workflow wf = load(guarded(folder.path.string()));
  EXPECT_EQ(ids_of(wf), (std::vector<std::string>{"prep", "train"}));
  ASSERT_EQ(wf.left_out.size(), 2u);
  EXPECT_EQ(wf.left_out[0].id, "test_set");
  EXPECT_CONTAINS(wf.left_out[0].reason, "none of its 2 file(s) is in " + folder.path.string());
  EXPECT_CONTAINS(wf.left_out[0].reason, "(first: a.hea)");
  EXPECT_EQ(wf.left_out[1].id, "report");
  EXPECT_EQ(wf.left_out[1].reason, "needs stage 'test_set', which is left out");
  // The plan says so, and the resolved workflow loads again to the same stages.
  EXPECT_CONTAINS(dry_run_plan(wf), "left out: test_set (when.files_exist: none of its 2");
  EXPECT_EQ(ids_of(load(wf.resolved_yaml())), ids_of(wf));
}

// A stage that is left out is still checked: a typo in its params is refused at load, not
// found on the day its files arrive.
TEST(WorkflowConditions, ALeftOutStageStillHasItsParamsChecked) {
  std::string text = guarded("");
  text.replace(text.find("    needs: [test_set]\n"), 0, "    params: {windw: 128}\n");
  EXPECT_CONTAINS(error_of(text), "unknown key 'windw' in params of stage 'report'");
}

TEST(WorkflowConditions, AnEmptyFolderVariableLeavesTheStageOut) {
  const Workflow wf = load(guarded(""));
  ASSERT_EQ(wf.left_out.size(), 2u);
  EXPECT_EQ(wf.left_out[0].reason, "when.files_exist: no folder given (dir is empty)");
}

TEST(WorkflowConditions, SomeOfTheFilesButNotAllIsAnErrorNamingTheMissingOnes) {
  const Folder folder({"a.hea"});
  const std::string error = error_of(guarded(folder.path.string(), "[\"a\", \"b\", \"c\"]"));
  EXPECT_CONTAINS(error, "wf.yaml:12:20: stage 'test_set' needs all of its 3 files or none");
  EXPECT_CONTAINS(error, "; 2 missing from " + folder.path.string() + ": b.hea, c.hea");
}

// A list of suffixes: each record needs every one of its files (afdb: beats in .qrs, rhythm in
// .atr).
TEST(WorkflowConditions, EveryNameNeedsEachSuffixOfAList) {
  const Folder folder({"a.qrs", "a.atr", "b.qrs", "b.atr"});
  std::string text = guarded(folder.path.string());
  text.replace(text.find("suffix: .hea}"), 13, "suffix: [.qrs, .atr]}");
  EXPECT_TRUE(load(text).left_out.empty());
  fs::remove(folder.path / "b.atr");
  const std::string error = error_of(text);
  EXPECT_CONTAINS(error, "stage 'test_set' needs all of its 4 files or none");
  EXPECT_CONTAINS(error, "; 1 missing from " + folder.path.string() + ": b.atr");
  text.replace(text.find("suffix: [.qrs, .atr]}"), 21, "suffix: [.qrs, {a: b}]}");
  EXPECT_CONTAINS(error_of(text), "when.files_exist.suffix of stage 'test_set' must list texts");
}

TEST(WorkflowConditions, AMalformedConditionIsAnErrorAtItsLine) {
  const std::string base = "name: w\nstages:\n  - id: a\n    kind: pretrain\n    when:\n";
  EXPECT_EQ(error_of(base + "      file_exists: {dir: x, names: [y]}\n"),
            "wf.yaml:6:7: unknown condition 'file_exists' in 'when' of stage 'a' (did you mean "
            "'files_exist'?)");
  EXPECT_EQ(error_of(base + "      files_exist: {dir: x}\n"),
            "wf.yaml:6:20: when.files_exist of stage 'a' needs 'names'");
  EXPECT_EQ(error_of(base + "      files_exist: {dir: x, names: [y], sufix: .hea}\n"),
            "wf.yaml:6:41: unknown key 'sufix' in when.files_exist of stage 'a' (did you mean "
            "'suffix'?)");
  EXPECT_CONTAINS(error_of("name: w\nstages:\n  - id: a\n    kind: pretrain\n    when: yes\n"),
                  "wf.yaml:5:11: 'when' in stage 'a' must be a map of conditions");
}

}  // namespace
}  // namespace hlm::workflow::test_support
