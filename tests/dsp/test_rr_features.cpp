// RR features: a regular rhythm reads as typical (log ratios 0), a premature beat as early
// with a long interval after it, at any heart rate; pauses and zero intervals stay bounded.
#include <gtest/gtest.h>

#include <cmath>

#include "hlm/dsp/rr_features.h"

namespace {

std::vector<float> features(const std::vector<float>& rr) {
  return hlm::rr_features(rr.data(), rr.size());
}

}  // namespace

TEST(RrFeatures, ARegularRhythmIsTypicalAtAnyRate) {
  for (float rr : {0.4f, 0.8f, 1.5f}) {
    const auto f = features(std::vector<float>(40, rr));
    for (size_t i = 0; i < 40; ++i) {
      EXPECT_NEAR(f[i * 3 + 0], 0.0, 1e-6);
      EXPECT_NEAR(f[i * 3 + 1], 0.0, 1e-6);
      EXPECT_NEAR(f[i * 3 + 2], std::log(rr), 1e-6);
    }
  }
}

TEST(RrFeatures, APrematureBeatComesEarlyAndIsFollowedByACompensatoryPause) {
  for (float rr : {0.5f, 1.0f}) {
    std::vector<float> intervals(30, rr);
    intervals[15] = 0.6f * rr;  // beat 15 comes early
    intervals[16] = 1.4f * rr;  // and the next one late
    const auto f = features(intervals);
    EXPECT_LT(f[15 * 3 + 0], -0.4);
    EXPECT_GT(f[15 * 3 + 1], 0.25);
    // Its neighbours stay near typical; the features do not depend on the rate.
    EXPECT_NEAR(f[10 * 3 + 0], 0.0, 0.05);
    EXPECT_NEAR(features(std::vector<float>(intervals))[15 * 3], f[15 * 3], 1e-6);
  }
}

TEST(RrFeatures, ZeroIntervalsAndLongPausesStayBounded) {
  std::vector<float> rr = {0.0f, 0.8f, 0.0f, 40.0f, 0.8f, 0.8f};
  const auto f = features(rr);
  for (float v : f) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_LE(std::fabs(v), 2.0f);
  }
  EXPECT_TRUE(features({}).empty());
  EXPECT_EQ(features({0.0f}), std::vector<float>(3, 0.0f));
}
