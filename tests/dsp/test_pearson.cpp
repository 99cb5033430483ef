// dsp::pearson_correlation against hand-computed cases.
#include <gtest/gtest.h>

#include <vector>

#include "dsp/pearson.h"

using hlm::dsp::pearson_correlation;

TEST(Pearson, IsOneForAScaledCopyMinusOneForAnInvertedOneAndZeroWhenFlat) {
  const std::vector<float> a = {1, 2, 4, 3, 0};
  const std::vector<double> scaled = {12, 14, 18, 16, 10}, inverted = {-1, -2, -4, -3, 0};
  EXPECT_NEAR(pearson_correlation(a.data(), scaled.data(), a.size()), 1.0, 1e-12);
  EXPECT_NEAR(pearson_correlation(a.data(), inverted.data(), a.size()), -1.0, 1e-12);
  const std::vector<float> flat(5, 3.0f);
  EXPECT_EQ(pearson_correlation(a.data(), flat.data(), a.size()), 0.0);
  EXPECT_EQ(pearson_correlation(flat.data(), a.data(), a.size()), 0.0);
}

TEST(Pearson, MatchesAHandComputedValue) {
  // x = (1, 2, 3), y = (1, 3, 2): deviations (-1, 0, 1) and (-1, 1, 0), covariance 1,
  // variances 2 and 2: r = 1 / 2.
  const float x[] = {1, 2, 3}, y[] = {1, 3, 2};
  EXPECT_NEAR(pearson_correlation(x, y, 3), 0.5, 1e-12);
}
