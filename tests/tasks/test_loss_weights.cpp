// The loss weight per class that finetune's class_weights names (tasks/head_options.h),
// against hand-computed cases: a common, a rare and an absent class.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hlm/errors.h"
#include "tasks/head_options.h"

namespace {

// Counts 99, 0 and 9 are taken as 100, 1 and 10 (so the absent class stays finite): 111 in all,
// shares 100/111, 1/111 and 10/111, and 1/(3 x share) is 0.37, 37 and 3.7.
const std::vector<double> kCounts = {99, 0, 9};

TEST(LossWeights, InverseWeighsEveryClassTheSameInTotal) {
  const std::vector<float> w = hlm::loss_weights(kCounts, "inverse");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0], 0.37, 1e-6);
  EXPECT_NEAR(w[1], 37.0, 1e-4);
  EXPECT_NEAR(w[2], 3.7, 1e-5);
  for (size_t c = 0; c < w.size(); ++c) EXPECT_NEAR(w[c] * (kCounts[c] + 1), 37.0, 1e-4);
}

TEST(LossWeights, SqrtIsTheSquareRootOfInverse) {
  const std::vector<float> w = hlm::loss_weights(kCounts, "sqrt");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0], std::sqrt(0.37), 1e-6);
  EXPECT_NEAR(w[1], std::sqrt(37.0), 1e-5);
  EXPECT_NEAR(w[2], std::sqrt(3.7), 1e-6);
  // A rarer class counts more, but less than with inverse weights.
  EXPECT_GT(w[1], w[2]);
  EXPECT_GT(w[2], w[0]);
  EXPECT_LT(w[1] / w[0], 37.0 / 0.37);
}

TEST(LossWeights, NoneWeighsEveryClassOne) {
  for (float w : hlm::loss_weights(kCounts, "none")) EXPECT_EQ(w, 1.0f);
}

TEST(LossWeights, BalancedClassesWeighOneUnderEveryScheme) {
  for (const char* scheme : {"sqrt", "inverse", "none"})
    for (float w : hlm::loss_weights({40, 40, 40, 40}, scheme)) EXPECT_NEAR(w, 1.0, 1e-6) << scheme;
}

TEST(LossWeights, AnUnknownSchemeIsRefusedWhereTheKeyIsRead) {
  EXPECT_THROW(hlm::HeadOptions::from_json({{"class_weights", "balanced"}}), hlm::ConfigError);
}

}  // namespace
