// Classification scores against hand-computed cases: a class never predicted, a class absent
// from both sides, an empty matrix, the Challenge 2017 score, AUROC with ties, and record
// bootstrap intervals.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/classification_metrics.h"

namespace {

using hlm::eval::Confusion;

// Rows reference, columns predicted, over classes N, S, V:
//        N   S   V
//   N   80   5   5
//   S    4   6   0
//   V    2   0  18
Confusion three_classes() {
  Confusion m(3);
  const int64_t counts[3][3] = {{80, 5, 5}, {4, 6, 0}, {2, 0, 18}};
  for (size_t t = 0; t < 3; ++t)
    for (size_t p = 0; p < 3; ++p) m.add(t, p, counts[t][p]);
  return m;
}

TEST(ClassificationMetrics, PerClassScoresMatchAHandComputedMatrix) {
  const Confusion m = three_classes();
  EXPECT_EQ(m.total(), 120);
  EXPECT_DOUBLE_EQ(hlm::eval::accuracy(m), 104.0 / 120.0);
  const auto s = hlm::eval::class_scores(m, 1);  // S: TP 6, support 10, predicted 11
  EXPECT_EQ(s.tp, 6);
  EXPECT_DOUBLE_EQ(s.se, 0.6);
  EXPECT_DOUBLE_EQ(s.ppv, 6.0 / 11.0);
  EXPECT_DOUBLE_EQ(s.specificity, (110.0 - 5.0) / 110.0);  // 5 of 110 non-S called S
  EXPECT_DOUBLE_EQ(s.f1, 12.0 / 21.0);
  const auto v = hlm::eval::class_scores(m, 2);  // V: TP 18, support 20, predicted 23
  EXPECT_DOUBLE_EQ(v.se, 0.9);
  EXPECT_DOUBLE_EQ(v.ppv, 18.0 / 23.0);
  EXPECT_DOUBLE_EQ(v.f1, 36.0 / 43.0);
  const double n_f1 = 160.0 / (90.0 + 86.0);
  EXPECT_DOUBLE_EQ(hlm::eval::macro_f1(m), (n_f1 + 12.0 / 21.0 + 36.0 / 43.0) / 3.0);
  EXPECT_EQ(hlm::eval::majority_class(m), 0u);
  EXPECT_DOUBLE_EQ(hlm::eval::majority_baseline(m), 90.0 / 120.0);
}

// Records pooled: every item of each record counted once, in one matrix; no records, an
// empty one of the classes asked for.
TEST(ClassificationMetrics, PoolingRecordsSumsTheirMatrices) {
  Confusion other(3);
  other.add(1, 1, 4);
  other.add(2, 0, 1);
  const Confusion all = hlm::eval::pooled({three_classes(), other}, 3);
  EXPECT_EQ(all.total(), 125);
  EXPECT_EQ(hlm::eval::class_scores(all, 1).tp, 10);
  EXPECT_EQ(all.support(2), 21);
  EXPECT_EQ(hlm::eval::pooled({}, 4).total(), 0);
  EXPECT_EQ(hlm::eval::pooled({}, 4).classes(), 4u);
}

// The baseline every table shows: the same reference items, each one called one class.
TEST(ClassificationMetrics, AlwaysAnsweringOneClassKeepsTheReferenceAndScoresAsTheBaseline) {
  const Confusion m = three_classes();
  const Confusion b = hlm::eval::always_answering(m, 0);
  EXPECT_EQ(b.total(), m.total());
  for (size_t c = 0; c < 3; ++c) EXPECT_EQ(b.support(c), m.support(c));
  EXPECT_EQ(b.predicted(0), 120);
  EXPECT_DOUBLE_EQ(hlm::eval::accuracy(b), hlm::eval::majority_baseline(m));
  EXPECT_DOUBLE_EQ(hlm::eval::class_scores(b, 0).f1, 180.0 / 210.0);  // 2 x 90 / (90 + 120)
  const auto s = hlm::eval::class_scores(b, 1);
  EXPECT_DOUBLE_EQ(s.se, 0.0);
  EXPECT_TRUE(std::isnan(s.ppv));  // never predicted
  EXPECT_DOUBLE_EQ(s.specificity, 1.0);
  EXPECT_DOUBLE_EQ(hlm::eval::macro_f1(b), (180.0 / 210.0) / 3.0);
}

TEST(ClassificationMetrics, AClassNeverPredictedHasNoPpvAndCountsAsZeroInMacroF1) {
  Confusion m(2);
  m.add(0, 0, 9);
  m.add(1, 0, 1);  // the one item of class 1 is called 0
  const auto s = hlm::eval::class_scores(m, 1);
  EXPECT_DOUBLE_EQ(s.se, 0.0);
  EXPECT_TRUE(std::isnan(s.ppv));
  EXPECT_DOUBLE_EQ(s.f1, 0.0);
  EXPECT_DOUBLE_EQ(s.specificity, 1.0);
  const double f1_0 = 18.0 / (9.0 + 10.0);
  EXPECT_DOUBLE_EQ(hlm::eval::macro_f1(m), (f1_0 + 0.0) / 2.0);
}

TEST(ClassificationMetrics, AClassAbsentFromBothSidesIsLeftOutOfMacroF1) {
  Confusion m(3);
  m.add(0, 0, 5);
  m.add(1, 1, 5);
  const auto absent = hlm::eval::class_scores(m, 2);
  EXPECT_TRUE(std::isnan(absent.se));
  EXPECT_TRUE(std::isnan(absent.ppv));
  EXPECT_TRUE(std::isnan(absent.f1));
  EXPECT_DOUBLE_EQ(hlm::eval::macro_f1(m), 1.0);
  // The Challenge score averages the classes it names, an absent one as 0.
  EXPECT_DOUBLE_EQ(hlm::eval::mean_f1(m, {0, 1, 2}), 2.0 / 3.0);
}

TEST(ClassificationMetrics, AnEmptyMatrixHasNoAccuracy) {
  const Confusion m(4);
  EXPECT_TRUE(std::isnan(hlm::eval::accuracy(m)));
  EXPECT_TRUE(std::isnan(hlm::eval::macro_f1(m)));
  EXPECT_TRUE(std::isnan(hlm::eval::majority_baseline(m)));
}

// Challenge 2017 (Clifford et al. 2017): F1 of N, A and O, each 2 TP / (row + column), averaged;
// the noisy class ~ is not scored.
TEST(ClassificationMetrics, Challenge2017ScoreIsTheMeanF1OfNAAndO) {
  Confusion m(4);  // N, A, O, ~
  const int64_t counts[4][4] = {{50, 1, 4, 0}, {2, 8, 1, 0}, {6, 1, 20, 1}, {1, 0, 1, 2}};
  for (size_t t = 0; t < 4; ++t)
    for (size_t p = 0; p < 4; ++p) m.add(t, p, counts[t][p]);
  const double fn = 100.0 / (55 + 59), fa = 16.0 / (11 + 10), fo = 40.0 / (28 + 26);
  EXPECT_DOUBLE_EQ(hlm::eval::mean_f1(m, {0, 1, 2}), (fn + fa + fo) / 3.0);
}

TEST(ClassificationMetrics, AurocCountsTiesAsHalf) {
  EXPECT_DOUBLE_EQ(hlm::eval::auroc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(hlm::eval::auroc({0.1, 0.2, 0.8, 0.9}, {1, 1, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(hlm::eval::auroc({0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}), 0.5);
  // Pairs (positive, negative): (0.35, 0.1) yes, (0.35, 0.4) no, (0.8, both) yes: 3 of 4.
  EXPECT_DOUBLE_EQ(hlm::eval::auroc({0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}), 0.75);
  // One tie between a positive and a negative: half a pair.
  EXPECT_DOUBLE_EQ(hlm::eval::auroc({0.1, 0.4, 0.4, 0.8}, {0, 0, 1, 1}), 3.5 / 4.0);
  EXPECT_TRUE(std::isnan(hlm::eval::auroc({0.1, 0.2}, {1, 1})));
}

// Twenty records of different accuracy: the 95 % interval holds the pooled accuracy, a 50 %
// one is inside it, and the same seed gives the same interval.
TEST(ClassificationMetrics, RecordBootstrapIntervalsCoverThePointEstimate) {
  std::vector<Confusion> records;
  Confusion pooled(2);
  for (int r = 0; r < 20; ++r) {
    Confusion m(2);
    m.add(0, 0, 40 + r);
    m.add(0, 1, r % 7);
    m.add(1, 1, 5 + r % 3);
    m.add(1, 0, r % 4);
    records.push_back(m);
    pooled += m;
  }
  const double point = hlm::eval::accuracy(pooled);
  const auto wide = hlm::eval::bootstrap_by_record(records, hlm::eval::accuracy, 2000, 0.95, 7);
  const auto narrow = hlm::eval::bootstrap_by_record(records, hlm::eval::accuracy, 2000, 0.50, 7);
  EXPECT_LT(wide.low, point);
  EXPECT_GT(wide.high, point);
  EXPECT_LE(wide.low, narrow.low);
  EXPECT_GE(wide.high, narrow.high);
  EXPECT_LT(wide.high - wide.low, 0.1);
  const auto again = hlm::eval::bootstrap_by_record(records, hlm::eval::accuracy, 2000, 0.95, 7);
  EXPECT_EQ(again.low, wide.low);
  EXPECT_EQ(again.high, wide.high);
  // Identical records: every resample pools to the same matrix, a zero-width interval.
  const std::vector<Confusion> same(5, records.front());
  const auto flat = hlm::eval::bootstrap_by_record(same, hlm::eval::accuracy, 200, 0.95, 7);
  EXPECT_DOUBLE_EQ(flat.low, hlm::eval::accuracy(records.front()));
  EXPECT_DOUBLE_EQ(flat.high, flat.low);
}

// Two classifiers on the same twenty records of very different difficulty: b is a with one
// more error in every record. Each model's own interval is wide (the records differ), but the
// paired interval of the difference is narrow and excludes 0; swapped, it is mirrored; and a
// model against itself differs by exactly 0.
TEST(ClassificationMetrics, APairedRecordBootstrapSeesADifferenceTheSeparateIntervalsHide) {
  std::vector<Confusion> a, b;
  for (int r = 0; r < 20; ++r) {
    Confusion m(2);
    m.add(0, 0, 20 + 3 * r);
    m.add(0, 1, 15 - r / 2);
    m.add(1, 1, 10);
    m.add(1, 0, 2 + r % 5);
    a.push_back(m);
    m.add(0, 1, 1);  // one more error
    m.add(0, 0, -1);
    b.push_back(m);
  }
  const auto own_a = hlm::eval::bootstrap_by_record(a, hlm::eval::accuracy, 1000, 0.95, 3);
  const auto own_b = hlm::eval::bootstrap_by_record(b, hlm::eval::accuracy, 1000, 0.95, 3);
  EXPECT_LT(own_a.low, own_b.high);  // the separate intervals overlap
  const auto diff =
      hlm::eval::bootstrap_difference_by_record(a, b, hlm::eval::accuracy, 1000, 0.95, 3);
  EXPECT_GT(diff.low, 0.0);
  EXPECT_LT(diff.high - diff.low, 0.5 * (own_a.high - own_a.low));
  const auto swapped =
      hlm::eval::bootstrap_difference_by_record(b, a, hlm::eval::accuracy, 1000, 0.95, 3);
  EXPECT_NEAR(swapped.low, -diff.high, 1e-12);
  EXPECT_NEAR(swapped.high, -diff.low, 1e-12);
  const auto self =
      hlm::eval::bootstrap_difference_by_record(a, a, hlm::eval::accuracy, 1000, 0.95, 3);
  EXPECT_EQ(self.low, 0.0);
  EXPECT_EQ(self.high, 0.0);
  EXPECT_THROW(
      hlm::eval::bootstrap_difference_by_record(a, {b.begin(), b.end() - 1}, hlm::eval::accuracy),
      std::invalid_argument);
}

}  // namespace
