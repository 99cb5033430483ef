// Sampling-rate conversion (hlm/dsp/resample.h): a signal keeps its shape and timing at the
// new rate, and what the new rate cannot hold is filtered out rather than folded back.
#include <gtest/gtest.h>

#include <cmath>

#include "hlm/dsp/resample.h"
#include "hlm/errors.h"

namespace {

std::vector<float> sine(double hz, double rate_hz, double seconds) {
  std::vector<float> x(size_t(seconds * rate_hz));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(std::sin(2.0 * M_PI * hz * double(i) / rate_hz));
  return x;
}

// The largest difference from sin(2 pi hz t) over the samples 1 s from either end (the
// converter's filter needs signal on both sides).
double worst_error(const std::vector<float>& y, double hz, double rate_hz) {
  double worst = 0.0;
  const size_t margin = size_t(rate_hz);
  for (size_t k = margin; k + margin < y.size(); ++k)
    worst =
        std::max(worst, std::fabs(double(y[k]) - std::sin(2.0 * M_PI * hz * double(k) / rate_hz)));
  return worst;
}

}  // namespace

TEST(Resample, KeepsASlowSineInPlaceWhenTheRateFallsOrRises) {
  // 5 Hz sits in the QRS band; 360 Hz is MIT-BIH's rate, 128 and 1000 Hz the range's ends.
  for (double to : {128.0, 250.0, 1000.0}) {
    const auto y = hlm::dsp::resample_to_rate(sine(5.0, 360.0, 10.0), 360.0, to);
    EXPECT_NEAR(double(y.size()), 10.0 * to, 2.0) << to;
    EXPECT_LT(worst_error(y, 5.0, to), 2e-3) << to;
  }
}

TEST(Resample, FiltersWhatTheLowerRateCannotHoldInsteadOfAliasingIt) {
  // 100 Hz is above 128 Hz's Nyquist frequency (64 Hz): sampled as is, it would come back as
  // a 28 Hz wave of full height.
  const auto y = hlm::dsp::resample_to_rate(sine(100.0, 360.0, 10.0), 360.0, 128.0);
  double largest = 0.0;
  for (size_t k = 128; k + 128 < y.size(); ++k)
    largest = std::max(largest, std::fabs(double(y[k])));
  EXPECT_LT(largest, 0.01);
}

TEST(Resample, TheSameRateReturnsTheSignalAndBadRatesAreRefused) {
  const auto x = sine(5.0, 360.0, 1.0);
  EXPECT_EQ(hlm::dsp::resample_to_rate(x, 360.0, 360.0), x);
  EXPECT_THROW(hlm::dsp::resample_to_rate(x, 360.0, 0.0), hlm::ConfigError);
  EXPECT_THROW(hlm::dsp::resample_to_rate(x, -1.0, 128.0), hlm::ConfigError);
  EXPECT_THROW(hlm::dsp::resample_to_rate(x, 360.0, 360.0 * 300.0), hlm::ConfigError);
}
