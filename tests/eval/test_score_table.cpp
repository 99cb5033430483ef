// The score table a report shows: hand-computed figures, a class never predicted and a class
// absent from the reference, the majority baseline and the confusion matrix in the results.
#include <gtest/gtest.h>

#include "eval/score_table.h"

TEST(ScoreTable, HandComputedCaseWithAnAbsentAndANeverPredictedClass) {
  // Classes A, B, C. Record 1: 8 A (7 right, 1 as B); record 2: 2 B both predicted A.
  hlm::eval::Confusion r1(3), r2(3);
  r1.add(0, 0, 7);
  r1.add(0, 1, 1);
  r2.add(1, 0, 2);
  nlohmann::json results;
  const std::string md = hlm::eval::score_table({r1, r2}, {"A", "B", "C"}, results);
  EXPECT_DOUBLE_EQ(results["accuracy"], 0.7);
  EXPECT_EQ(results["majority_class"], "A");
  EXPECT_DOUBLE_EQ(results["majority_baseline"], 0.8);
  EXPECT_EQ(results["items"], 10);
  EXPECT_EQ(results["records"], 2);
  // A: Se 7/8, +P 7/9; B: Se 0, +P 0/1 = 0, F1 0; C absent everywhere: NaN, shown as n/a.
  EXPECT_DOUBLE_EQ(results["classes"]["A"]["se"], 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(results["classes"]["A"]["ppv"], 7.0 / 9.0);
  EXPECT_DOUBLE_EQ(results["classes"]["B"]["se"], 0.0);
  EXPECT_DOUBLE_EQ(results["classes"]["B"]["f1"], 0.0);
  EXPECT_TRUE(results["classes"]["C"]["se"].is_null() ||
              std::isnan(results["classes"]["C"]["se"].get<double>()));
  // Macro F1 over classes with reference items: (2*7/(8+9) + 0) / 2.
  EXPECT_NEAR(results["macro_f1"].get<double>(), (14.0 / 17.0) / 2.0, 1e-12);
  EXPECT_EQ(results["confusion"], nlohmann::json({{7, 1, 0}, {2, 0, 0}, {0, 0, 0}}));
  // Always A: A's F1 2 x 8 / (8 + 10), B's 0, C left out of the macro F1 as above.
  EXPECT_NEAR(results["majority_baseline_macro_f1"].get<double>(), (16.0 / 18.0) / 2.0, 1e-12);
  EXPECT_NE(md.find("always answering A would score 0.800 (macro F1 0.444), -0.100"),
            std::string::npos)
      << md;
  // Each class's F1 beside the baseline's.
  EXPECT_NE(md.find("| F1 | F1, always A |"), std::string::npos) << md;
  EXPECT_NE(md.find(" | 0.824 | 0.889 |\n| B | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find(" | 0.000 | 0.000 |\n| C | 0 |"), std::string::npos) << md;
  // Against the baseline on the same records: record 1 loses 1 of 8 (7/8 against 8/8), record
  // 2 scores 0 either way. Resamples give 14/16 - 1 = -0.125 (record 1 twice), -0.1 (both) or
  // 0 (record 2 twice): the interval runs from -0.125 to 0.
  const auto& over = results["accuracy_over_baseline"];
  EXPECT_DOUBLE_EQ(over["value"], 0.7 - 0.8);
  EXPECT_LT(over["ci95"][0].get<double>(), -0.1 + 1e-9);
  EXPECT_LE(over["ci95"][1].get<double>(), 0.0);
  EXPECT_LE(over["ci95"][0].get<double>(), over["value"].get<double>());
  EXPECT_NE(md.find("| C | 0 | n/a |"), std::string::npos) << md;
  EXPECT_NE(md.find(" | n/a | n/a |\n\nConfusion"), std::string::npos) << md;
}
