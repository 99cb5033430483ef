// EC57's ectopic beat statistics: hand-computed VEB and SVEB figures where fusion and Q beats
// are called V and Q beats S (bxb counts those in no cell), and the report's paragraph, which
// only the AAMI beat classes get.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/classification_metrics.h"
#include "eval/score_table.h"

namespace {

constexpr size_t kN = 0, kS = 1, kV = 2, kF = 3, kQ = 4;

// Rows: reference N, S, V, F, Q; columns: predicted in the same order. 122 beats.
hlm::eval::Confusion hand_case() {
  const int64_t rows[5][5] = {{90, 3, 2, 1, 0},  // N: 3 called S, 2 called V
                              {2, 6, 1, 0, 0},   // S
                              {1, 0, 8, 1, 0},   // V: 1 called N, 1 called F
                              {1, 0, 4, 0, 0},   // F: 4 called V (not false V in EC57)
                              {0, 1, 1, 0, 0}};  // Q: 1 called S, 1 called V (neither false)
  hlm::eval::Confusion m(5);
  for (size_t t = 0; t < 5; ++t)
    for (size_t p = 0; p < 5; ++p) m.add(t, p, rows[t][p]);
  return m;
}

TEST(Ec57, FusionAndQBeatsCalledVentricularAreNotFalsePositives) {
  const auto v = hlm::eval::ectopic_scores(hand_case(), kV, {kF, kQ});
  EXPECT_EQ(v.tp, 8);
  EXPECT_EQ(v.fn, 2);  // a V beat called F is missed
  EXPECT_EQ(v.fp, 3);  // N and S called V; not the 4 F and 1 Q
  // Everything outside V's row and column: 122 - 10 - 16 + 8.
  EXPECT_EQ(v.tn, 104);
  EXPECT_DOUBLE_EQ(v.se, 0.8);
  EXPECT_DOUBLE_EQ(v.ppv, 8.0 / 11.0);
  EXPECT_DOUBLE_EQ(v.fpr, 3.0 / 107.0);
  // One class against the rest would count all 16 beats called V: +P 0.5.
  EXPECT_DOUBLE_EQ(hlm::eval::class_scores(hand_case(), kV).ppv, 0.5);

  const auto s = hlm::eval::ectopic_scores(hand_case(), kS, {kQ});
  EXPECT_EQ(s.tp, 6);
  EXPECT_EQ(s.fn, 3);
  EXPECT_EQ(s.fp, 3);  // N called S; the Q beat called S is not counted
  EXPECT_EQ(s.tn, 122 - 9 - 10 + 6);
  EXPECT_DOUBLE_EQ(s.ppv, 6.0 / 9.0);
  EXPECT_DOUBLE_EQ(hlm::eval::class_scores(hand_case(), kS).ppv, 0.6);  // the Q beat counted
  EXPECT_DOUBLE_EQ(s.fpr, 3.0 / 112.0);
}

TEST(Ec57, AClassNeverPredictedHasNoPositivePredictivity) {
  hlm::eval::Confusion m(5);
  m.add(kN, kN, 10);
  m.add(kV, kN, 2);
  m.add(kF, kF, 1);
  const auto v = hlm::eval::ectopic_scores(m, kV, {kF, kQ});
  EXPECT_DOUBLE_EQ(v.se, 0.0);
  EXPECT_TRUE(std::isnan(v.ppv));
  EXPECT_DOUBLE_EQ(v.fpr, 0.0);
  const auto s = hlm::eval::ectopic_scores(m, kS, {kQ});
  EXPECT_TRUE(std::isnan(s.se));  // no S beats at all
}

TEST(Ec57, TheReportShowsThemForTheAamiClassesOnly) {
  nlohmann::json results;
  const std::string md = hlm::eval::ec57_table({hand_case()}, {"N", "S", "V", "F", "Q"}, results);
  EXPECT_DOUBLE_EQ(results["ec57"]["V"]["ppv"], 8.0 / 11.0);
  EXPECT_DOUBLE_EQ(results["ec57"]["S"]["se"], 6.0 / 9.0);
  // One record: every resample is that record, so the interval is the point itself.
  EXPECT_DOUBLE_EQ(results["ec57"]["V"]["ppv_ci95"][0], 8.0 / 11.0);
  EXPECT_NE(md.find("| V | 0.800 (0.800-0.800) | 0.727 (0.727-0.727) | 0.028 |"), std::string::npos)
      << md;
  // The majority-class baseline (always N) finds no V and no S beat and calls none.
  EXPECT_NE(md.find("| V, always N | 0.000 | n/a | 0.000 |\n| S, always N | 0.000 | n/a | 0.000 |"),
            std::string::npos)
      << md;
  // Without Q the rules still hold (nothing to excuse but F for V).
  nlohmann::json without_q;
  hlm::eval::Confusion four(4);
  four.add(3, 2, 5);  // F called V
  four.add(2, 2, 5);
  EXPECT_FALSE(hlm::eval::ec57_table({four}, {"N", "S", "V", "F"}, without_q).empty());
  EXPECT_DOUBLE_EQ(without_q["ec57"]["V"]["ppv"], 1.0);

  nlohmann::json challenge;
  EXPECT_EQ(hlm::eval::ec57_table({hlm::eval::Confusion(4)}, {"N", "A", "O", "~"}, challenge), "");
  EXPECT_FALSE(challenge.contains("ec57"));
}

}  // namespace
