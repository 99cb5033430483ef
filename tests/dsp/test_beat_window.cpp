// Beat windows: -0.25 s..+0.40 s around each R peak, 64 points, mean removed.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "hlm/dsp/beat_window.h"
#include "hlm/errors.h"

namespace {
// A triangle pulse at r of half-width `half` seconds on a constant offset, sampled at fs.
std::vector<float> pulse(double fs, double seconds, double r_s, double half_s, float offset) {
  std::vector<float> x(size_t(seconds * fs), offset);
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(double(i) / fs - r_s);
    if (d < half_s) x[i] += float(1.0 - d / half_s);
  }
  return x;
}
}  // namespace

TEST(DspBeatWindow, Resamples64PointsWithZeroMeanAndThePeakAtTheQuarterSecond) {
  const double fs = 360;
  const std::vector<float> x = pulse(fs, 4.0, 2.0, 0.05, 3.0f);
  std::vector<float> f;
  const auto kept = hlm::dsp::cut_beat_windows(x.data(), x.size(), fs, {720}, {}, &f);
  ASSERT_EQ(kept, (std::vector<size_t>{0}));
  ASSERT_EQ(f.size(), 64u);
  EXPECT_NEAR(std::accumulate(f.begin(), f.end(), 0.0), 0.0, 1e-4);
  const size_t peak = size_t(std::max_element(f.begin(), f.end()) - f.begin());
  EXPECT_EQ(peak, size_t(std::lround(0.25 / 0.65 * 63)));  // point 24 of 0..63
}

TEST(DspBeatWindow, DropsBeatsWhoseWindowDoesNotFit) {
  const double fs = 250;
  const std::vector<float> x(2500, 0.0f);  // 10 s
  std::vector<float> f;
  const auto kept =
      hlm::dsp::cut_beat_windows(x.data(), x.size(), fs, {10, 62, 63, 1000, 2399, 2400}, {}, &f);
  EXPECT_EQ(kept, (std::vector<size_t>{2, 3, 4}));  // needs r >= 62.5 and r + 100 <= 2499
  EXPECT_EQ(f.size(), 3u * 64u);
}

TEST(DspBeatWindow, GivesTheSameShapeAtAnySamplingRate) {
  std::vector<float> a, b;
  const std::vector<float> x360 = pulse(360, 3.0, 1.5, 0.04, 0.0f);
  const std::vector<float> x1000 = pulse(1000, 3.0, 1.5, 0.04, 0.0f);
  hlm::dsp::cut_beat_windows(x360.data(), x360.size(), 360, {540}, {}, &a);
  hlm::dsp::cut_beat_windows(x1000.data(), x1000.size(), 1000, {1500}, {}, &b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 0.03) << i;
}

TEST(DspBeatWindow, RejectsAWindowOfLessThanTwoPoints) {
  std::vector<float> x(100), f;
  hlm::dsp::BeatWindowOptions o;
  o.points = 1;
  EXPECT_ANY_THROW(hlm::dsp::cut_beat_windows(x.data(), x.size(), 100, {50}, o, &f));
}

// A NaN window edge or a rate that is not positive would put the window's points anywhere in
// memory: both are refused, and nothing is appended.
TEST(DspBeatWindow, RejectsANanWindowAndARateThatIsNotPositive) {
  std::vector<float> x(100), f;
  hlm::dsp::BeatWindowOptions nan_edge;
  nan_edge.before_seconds = std::nan("");
  EXPECT_THROW(hlm::dsp::cut_beat_windows(x.data(), x.size(), 100, {50}, nan_edge, &f),
               hlm::ConfigError);
  for (double rate : {0.0, -100.0, std::nan("")})
    EXPECT_THROW(hlm::dsp::cut_beat_windows(x.data(), x.size(), rate, {50}, {}, &f),
                 hlm::ConfigError)
        << rate;
  EXPECT_TRUE(f.empty());
}
