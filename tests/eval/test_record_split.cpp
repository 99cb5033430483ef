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
