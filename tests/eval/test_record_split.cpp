// Record-wise splits: every record on exactly one side, folds that cover the records once,
// independent of input order, and clear errors for impossible splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "eval/record_split.h"
#include "hlm/errors.h"

namespace {

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("r" + std::to_string(100 + i));
  return out;
}

}  // namespace

TEST(RecordSplit, KFoldPutsEachRecordInExactlyOneTestFoldAndNeverOnBothSides) {
  const auto records = names(22);
  std::map<std::string, int> tested;
  for (int fold = 0; fold < 5; ++fold) {
    const auto split = hlm::eval::kfold_split(records, 5, fold, 1);
    const std::set<std::string> test(split.test.begin(), split.test.end());
    for (const auto& r : split.train) EXPECT_FALSE(test.count(r)) << r << " in fold " << fold;
    EXPECT_EQ(split.train.size() + split.test.size(), records.size());
    EXPECT_GE(split.test.size(), 4u);  // 22 records in 5 folds: sizes 4 or 5
    EXPECT_LE(split.test.size(), 5u);
    for (const auto& r : split.test) ++tested[r];
  }
  EXPECT_EQ(tested.size(), records.size());
  for (const auto& [r, times] : tested) EXPECT_EQ(times, 1) << r;
}

TEST(RecordSplit, FoldsDependOnNamesAndSeedNotOnOrder) {
  auto records = names(10);
  const auto a = hlm::eval::kfold_split(records, 3, 1, 7);
  std::reverse(records.begin(), records.end());
  const auto b = hlm::eval::kfold_split(records, 3, 1, 7);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.train, b.train);
  EXPECT_NE(hlm::eval::kfold_split(records, 3, 1, 8).test, a.test);
}

TEST(RecordSplit, HoldoutTakesCountRecordsAndLeavesTheRestToTrain) {
  const auto split = hlm::eval::holdout_split(names(6), 2, 3);
  EXPECT_EQ(split.test.size(), 2u);
  EXPECT_EQ(split.train.size(), 4u);
  for (const auto& r : split.test)
    EXPECT_EQ(std::count(split.train.begin(), split.train.end(), r), 0) << r;
  // A smaller holdout of the same seed is a prefix: fewer labelled records are a subset.
  EXPECT_EQ(hlm::eval::holdout_split(names(6), 1, 3).test[0], split.test[0]);
}

TEST(RecordSplit, ImpossibleSplitsAreConfigErrors) {
  EXPECT_THROW(hlm::eval::kfold_split(names(3), 5, 0, 1), hlm::ConfigError);
  EXPECT_THROW(hlm::eval::kfold_split(names(5), 1, 0, 1), hlm::ConfigError);
  EXPECT_THROW(hlm::eval::kfold_split(names(5), 5, 5, 1), hlm::ConfigError);
  EXPECT_THROW(hlm::eval::holdout_split(names(3), 3, 1), hlm::ConfigError);
}

// Before: "folds=2 needs 2 to 1 (the number of records)".
TEST(RecordSplit, TooFewRecordsForTheFoldsSaysWhatToChange) {
  try {
    hlm::eval::kfold_split(names(1), 2, 0, 1);
    ADD_FAILURE() << "no ConfigError";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("there are 1 record(s); give the stage at least 2 "
                                         "records, or set folds: 0 (off)"),
              std::string::npos)
        << e.what();
  }
  try {
    hlm::eval::kfold_split(names(3), 5, 0, 1);
    ADD_FAILURE() << "no ConfigError";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("set folds from 2 to 3"), std::string::npos) << e.what();
  }
}

namespace {

// Items of N, S, V, F per record: six with N alone, two with S (40 and 50 beats), two with V
// (30 and 35), and one holding every F beat.
hlm::eval::ClassCounts ectopy_counts() {
  hlm::eval::ClassCounts c;
  for (const auto& name : names(6)) c[name] = {2000, 0, 0, 0};
  c["s40"] = {2000, 40, 0, 0};
  c["s50"] = {2000, 50, 0, 0};
  c["v30"] = {2000, 0, 30, 0};
  c["v35"] = {2000, 0, 35, 0};
  c["f_only"] = {2000, 0, 0, 100};
  return c;
}

int64_t items_of(const hlm::eval::ClassCounts& c, const std::vector<std::string>& records,
                 size_t cls) {
  int64_t n = 0;
  for (const auto& r : records) n += c.at(r)[cls];
  return n;
}

}  // namespace

// Two validation records drawn at random from eleven mostly show N alone; drawn by class, they
// show S and V whatever the seed, and never take the one record with F beats from training.
TEST(RecordSplit, ClassCoveringValidationShowsTheClassesTrainingKeeps) {
  const auto counts = ectopy_counts();
  std::vector<std::string> all;
  for (const auto& [name, items] : counts) all.push_back(name);
  int random_without_s_or_v = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const auto split = hlm::eval::class_covering_split(counts, 2, seed, 20);
    ASSERT_EQ(split.test.size(), 2u);
    ASSERT_EQ(split.train.size() + split.test.size(), counts.size());
    for (const auto& r : split.test)
      EXPECT_EQ(std::count(split.train.begin(), split.train.end(), r), 0) << r;
    EXPECT_GE(items_of(counts, split.test, 1), 20) << "seed " << seed;
    EXPECT_GE(items_of(counts, split.test, 2), 20) << "seed " << seed;
    EXPECT_EQ(items_of(counts, split.test, 3), 0) << "seed " << seed;
    // Training keeps at least as many beats of a class as validation takes: s50 would leave
    // 40, v35 30.
    EXPECT_EQ(std::count(split.test.begin(), split.test.end(), "s50"), 0) << "seed " << seed;
    EXPECT_EQ(std::count(split.test.begin(), split.test.end(), "v35"), 0) << "seed " << seed;
    const auto random = hlm::eval::holdout_split(all, 2, seed);
    if (items_of(counts, random.test, 1) == 0 || items_of(counts, random.test, 2) == 0)
      ++random_without_s_or_v;
  }
  EXPECT_GT(random_without_s_or_v, 20);  // what the draw by class changes
}

// With no class to bring (or a minimum no record reaches) the draw is holdout_split's.
TEST(RecordSplit, ClassCoveringFallsBackToTheShuffledOrder) {
  const auto counts = ectopy_counts();
  std::vector<std::string> all;
  for (const auto& [name, items] : counts) all.push_back(name);
  for (uint64_t seed = 0; seed < 10; ++seed)
    EXPECT_EQ(hlm::eval::class_covering_split(counts, 3, seed, 1000).test,
              hlm::eval::holdout_split(all, 3, seed).test)
        << "seed " << seed;
  EXPECT_THROW(hlm::eval::class_covering_split(counts, 11, 1, 20), hlm::ConfigError);
}
