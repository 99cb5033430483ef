// RR-ratio binning of the rhythm tokenizer (plugins/tokenizers/rhythm/rr_bins.h): log-spaced
// edges, end bins, the running median of the intervals before each beat, token layout.
#include <gtest/gtest.h>

#include <cmath>

#include "../../../plugins/tokenizers/rhythm/rr_bins.h"

using hlm::rhythm::RrBins;

TEST(RhythmBins, SixteenEdgesRunLogSpacedFromHalfToTwiceTheMedian) {
  const RrBins bins(16, 0.5, 2.0);
  ASSERT_EQ(bins.edges().size(), 17u);
  EXPECT_DOUBLE_EQ(bins.edges().front(), 0.5);
  EXPECT_DOUBLE_EQ(bins.edges().back(), 2.0);
  EXPECT_DOUBLE_EQ(bins.edges()[8], 1.0);
  for (size_t k = 0; k < 16; ++k)
    EXPECT_NEAR(bins.edges()[k + 1] / bins.edges()[k], std::pow(4.0, 1.0 / 16.0), 1e-12) << k;
}

TEST(RhythmBins, EachEdgeStartsItsBinAndTheBinEndsJustBelowTheNextEdge) {
  const RrBins bins(16, 0.5, 2.0);
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(bins.bin(bins.edges()[size_t(k)]), k);
    EXPECT_EQ(bins.bin(bins.edges()[size_t(k) + 1] * (1 - 1e-9)), k);
  }
}

TEST(RhythmBins, RatiosOutsideTheRangeGoToTheEndBins) {
  const RrBins bins(16, 0.5, 2.0);
  EXPECT_EQ(bins.bin(0.0), 0);
  EXPECT_EQ(bins.bin(0.2), 0);
  EXPECT_EQ(bins.bin(2.0), 15);
  EXPECT_EQ(bins.bin(30.0), 15);
}

TEST(RhythmBins, ASteadyRhythmFallsInBinEightAndAPrematureBeatInBinFour) {
  const RrBins bins(16, 0.5, 2.0);
  EXPECT_EQ(bins.bin(1.0), 8);
  EXPECT_EQ(bins.bin(0.75), 4);   // 16 * log(1.5) / log(4) = 4.68
  EXPECT_EQ(bins.bin(1.25), 10);  // 16 * log(2.5) / log(4) = 10.6
}

TEST(RhythmRatios, ComeFromTheMedianOfTheEightIntervalsBeforeEachBeat) {
  // Ten intervals of 100 samples, one of 50, one of 150, then 100 again.
  std::vector<int64_t> pos{0};
  for (int64_t rr : {100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 50, 150, 100})
    pos.push_back(pos.back() + rr);
  const std::vector<double> r = hlm::rhythm::rr_ratios(pos, 8);
  ASSERT_EQ(r.size(), pos.size());
  EXPECT_DOUBLE_EQ(r[0], 1.0);  // no interval
  EXPECT_DOUBLE_EQ(r[1], 1.0);  // no interval before it
  EXPECT_DOUBLE_EQ(r[10], 1.0);
  EXPECT_DOUBLE_EQ(r[11], 0.5);
  EXPECT_DOUBLE_EQ(r[12], 1.5);  // the short interval does not move the median
  EXPECT_DOUBLE_EQ(r[13], 1.0);
}

TEST(RhythmRatios, AnEvenNumberOfEarlierIntervalsTakesTheMeanOfTheMiddleTwo) {
  const std::vector<int64_t> pos{0, 100, 300, 450};  // intervals 100, 200, then 150
  const std::vector<double> r = hlm::rhythm::rr_ratios(pos, 8);
  EXPECT_DOUBLE_EQ(r[2], 2.0);  // 200 / median{100}
  EXPECT_DOUBLE_EQ(r[3], 1.0);  // 150 / mean(100, 200)
}

TEST(RhythmRatios, AWindowOfOneComparesWithThePreviousIntervalOnly) {
  const std::vector<int64_t> pos{0, 100, 300, 350};
  const std::vector<double> r = hlm::rhythm::rr_ratios(pos, 1);
  EXPECT_DOUBLE_EQ(r[2], 2.0);
  EXPECT_DOUBLE_EQ(r[3], 0.25);
}

TEST(RhythmTokens, ClassesAreRowsOfBinsAfterTheSpecialTokens) {
  EXPECT_EQ(hlm::rhythm::rhythm_token(hlm::BeatClass::kN, 0, 16), hlm::kFirstContentToken);
  EXPECT_EQ(hlm::rhythm::rhythm_token(hlm::BeatClass::kN, 8, 16), 12u);
  EXPECT_EQ(hlm::rhythm::rhythm_token(hlm::BeatClass::kV, 4, 16), 4u + 32u + 4u);
  EXPECT_EQ(hlm::rhythm::rhythm_token(hlm::BeatClass::kQ, 15, 16), 83u);  // the last of 84
}
