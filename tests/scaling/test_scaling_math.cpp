// The paper's equations 1-3 on hand-computed cases, and repeat statistics.
#include <gtest/gtest.h>

#include "hlm/errors.h"
#include "scaling/scaling_math.h"

namespace {

TEST(ScalingMath, StrongScalingFollowsThePapersEquations) {
  // T1 = 100 s, T2 = 62.5 s: S = 1.6, E = 0.8, O = 62.5 - 50 = 12.5 s.
  const auto r = hlm::scaling_ratios(hlm::Scaling::kStrong, 100, 62.5, 2);
  EXPECT_DOUBLE_EQ(r.speedup, 1.6);
  EXPECT_DOUBLE_EQ(r.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(r.overhead_seconds, 12.5);
  // The paper's 4-GPU figure: S = 1.9 means E = 0.475 and O = T4 - T1/4.
  const auto four = hlm::scaling_ratios(hlm::Scaling::kStrong, 190, 100, 4);
  EXPECT_DOUBLE_EQ(four.speedup, 1.9);
  EXPECT_DOUBLE_EQ(four.efficiency, 0.475);
  EXPECT_DOUBLE_EQ(four.overhead_seconds, 100 - 47.5);
}

TEST(ScalingMath, WeakScalingComparesTimesAtTheSameWorkPerRank) {
  // 4 ranks doing 4 times the work in 125 s where one rank took 100 s.
  const auto r = hlm::scaling_ratios(hlm::Scaling::kWeak, 100, 125, 4);
  EXPECT_DOUBLE_EQ(r.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(r.speedup, 3.2);
  EXPECT_DOUBLE_EQ(r.overhead_seconds, 25);
}

TEST(ScalingMath, OneRankIsItsOwnBaseline) {
  const auto r = hlm::scaling_ratios(hlm::Scaling::kStrong, 42, 42, 1);
  EXPECT_DOUBLE_EQ(r.speedup, 1);
  EXPECT_DOUBLE_EQ(r.efficiency, 1);
  EXPECT_DOUBLE_EQ(r.overhead_seconds, 0);
}

TEST(ScalingMath, SpreadIsMedianAndRange) {
  const auto odd = hlm::spread_of({3, 1, 2});
  EXPECT_DOUBLE_EQ(odd.median, 2);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.max, 3);
  EXPECT_DOUBLE_EQ(hlm::spread_of({4, 1, 2, 3}).median, 2.5);
  EXPECT_DOUBLE_EQ(hlm::spread_of({}).median, 0);
}

TEST(ScalingMath, ScalingNames) {
  EXPECT_EQ(hlm::scaling_from_name("strong"), hlm::Scaling::kStrong);
  EXPECT_EQ(hlm::scaling_from_name("weak"), hlm::Scaling::kWeak);
  EXPECT_THROW(hlm::scaling_from_name("linear"), hlm::InternalError);
}

}  // namespace
