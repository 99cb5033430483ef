// Filters: baseline-wander removal (high-pass and median pair), low-pass, running median.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dsp/biquad.h"
#include "hlm/dsp/filter.h"
#include "hlm/errors.h"

namespace {
constexpr double kPi = 3.14159265358979323846;

std::vector<float> sine(size_t n, double fs, double hz, double amp, double phase = 0.0) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(amp * std::sin(2 * kPi * hz * i / fs + phase));
  return x;
}

double rms(const std::vector<float>& x, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += double(x[i]) * x[i];
  return std::sqrt(s / double(to - from));
}
}  // namespace

TEST(DspFilter, HighPassRemovesSlowBaselineAndKeepsQrsBand) {
  const double fs = 360;
  const size_t n = 36000;
  std::vector<float> wander = sine(n, fs, 0.1, 1.0), qrs_band = sine(n, fs, 10.0, 0.5);
  std::vector<float> out(n);
  hlm::dsp::highpass(wander.data(), n, fs, 0.5, out.data());
  EXPECT_LT(rms(out, 0, n), 0.01 * rms(wander, 0, n));
  hlm::dsp::highpass(qrs_band.data(), n, fs, 0.5, out.data());
  EXPECT_NEAR(rms(out, 0, n), rms(qrs_band, 0, n), 0.01 * rms(qrs_band, 0, n));
}

TEST(DspFilter, HighPassIsZeroPhase) {
  const double fs = 250;
  const size_t n = 5000;
  std::vector<float> x = sine(n, fs, 5.0, 1.0), out(n);
  hlm::dsp::highpass(x.data(), n, fs, 0.5, out.data());
  for (size_t i = 1000; i < 4000; ++i) ASSERT_NEAR(out[i], x[i], 0.02) << i;
}

TEST(DspFilter, LowPassRemovesPowerLineAndWorksInPlace) {
  const double fs = 360;
  const size_t n = 7200;
  std::vector<float> x = sine(n, fs, 60.0, 1.0), slow = sine(n, fs, 5.0, 1.0);
  hlm::dsp::lowpass(x.data(), n, fs, 40.0, x.data());
  EXPECT_LT(rms(x, 100, n - 100), 0.2 * std::sqrt(0.5));  // 60 Hz keeps under 1/5 of its size
  hlm::dsp::lowpass(slow.data(), n, fs, 40.0, slow.data());
  EXPECT_NEAR(rms(slow, 100, n - 100), std::sqrt(0.5), 0.01);
}

TEST(DspFilter, RunningMedianMatchesBruteForceWithRepeatedEdges) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(-20, 20);  // many ties
  const size_t n = 3000;
  std::vector<float> x(n), out(n);
  for (float& v : x) v = float(level(rng));
  for (int width : {1, 2, 3, 9, 73, 217}) {
    hlm::dsp::running_median(x.data(), n, width, out.data());
    const int w = width | 1, h = w / 2;
    for (size_t i = 0; i < n; ++i) {
      std::vector<float> win;
      for (int j = -h; j <= h; ++j)
        win.push_back(x[std::clamp<ptrdiff_t>(ptrdiff_t(i) + j, 0, ptrdiff_t(n) - 1)]);
      std::nth_element(win.begin(), win.begin() + h, win.end());
      ASSERT_EQ(out[i], win[h]) << "width " << width << " at " << i;
    }
  }
}

TEST(DspFilter, MedianPairRemovesBaselineButKeepsNarrowSpikes) {
  const double fs = 360;
  const size_t n = 36000;
  std::vector<float> x = sine(n, fs, 0.2, 1.0);
  for (size_t i = 500; i < n; i += 300)
    for (int j = -5; j <= 5; ++j) x[i + j] += float(1.0 - std::abs(j) / 6.0);  // 30 ms spikes
  std::vector<float> out(n);
  hlm::dsp::remove_baseline_median(x.data(), n, fs, out.data());
  for (size_t i = 500; i + 300 < n; i += 300) {
    ASSERT_NEAR(out[i], 1.0f, 0.05f) << i;        // the spike survives
    ASSERT_NEAR(out[i + 150], 0.0f, 0.05f) << i;  // the baseline between spikes is gone
  }
}

TEST(DspFilter, CleanEcgOffersBothBaselineMethods) {
  const double fs = 500;
  const size_t n = 20000;
  std::vector<float> x = sine(n, fs, 0.15, 2.0);
  for (auto method : {hlm::dsp::BaselineMethod::kHighPass, hlm::dsp::BaselineMethod::kMedianPair}) {
    hlm::dsp::CleanOptions o;
    o.baseline = method;
    const std::vector<float> y = hlm::dsp::clean_ecg(x.data(), n, fs, o);
    ASSERT_EQ(y.size(), n);
    EXPECT_LT(rms(y, 1000, n - 1000), 0.05);
  }
}

// Long signals are filtered as segments side by side; the result must be the one-recursion
// result (to far below float precision), forward and backward, high- and low-pass.
TEST(DspFilter, SegmentedPassesMatchOneRecursion) {
  const double fs = 360.0;
  const size_t n = 650000;  // a MIT-BIH record: long enough for segments
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> x(n);
  float wander = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    wander += 0.01f * noise(rng);
    x[i] = wander + float(std::sin(2 * kPi * 1.2 * i / fs)) + noise(rng);
  }
  const std::vector<hlm::dsp::Biquad> sections{hlm::dsp::butterworth_highpass(fs, 0.5),
                                               hlm::dsp::butterworth_lowpass(fs, 40.0)};
  std::vector<float> one(n), segmented(n);
  hlm::dsp::filtfilt(sections, x.data(), n, 720, one.data(), /*allow_lanes=*/false);
  hlm::dsp::filtfilt(sections, x.data(), n, 720, segmented.data(), /*allow_lanes=*/true);
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::fabs(one[i] - segmented[i])));
  EXPECT_LT(worst, 1e-6) << "segments drift from the one-pass filter";
  // The filter did something: the output is not the input.
  EXPECT_GT(std::fabs(one[n / 2] - x[n / 2]), 1e-3);
}

namespace {
// filtfilt written out plainly: a padded copy in doubles, one recursion forward and one
// backward, each section started in its steady state (the arithmetic biquad.h describes).
std::vector<float> plain_filtfilt(const std::vector<hlm::dsp::Biquad>& sections,
                                  const std::vector<float>& x, size_t pad_samples) {
  const size_t n = x.size(), pad = std::min(pad_samples, n - 1);
  std::vector<double> buf(n + 2 * pad);
  for (size_t i = 0; i < pad; ++i) buf[pad - 1 - i] = 2.0 * double(x[0]) - double(x[i + 1]);
  for (size_t i = 0; i < n; ++i) buf[pad + i] = x[i];
  for (size_t i = 0; i < pad; ++i) buf[pad + n + i] = 2.0 * double(x[n - 1]) - double(x[n - 2 - i]);
  auto pass = [&](bool backward) {
    const size_t m = buf.size();
    std::vector<double> z1(sections.size()), z2(sections.size());
    double level = buf[backward ? m - 1 : 0];
    for (size_t s = 0; s < sections.size(); ++s) {
      const hlm::dsp::Biquad& b = sections[s];
      const double y = level * b.dc_gain();
      z2[s] = b.b2 * level - b.a2 * y;
      z1[s] = y - b.b0 * level;
      level *= b.dc_gain();
    }
    for (size_t t = 0; t < m; ++t) {
      double& at = buf[backward ? m - 1 - t : t];
      double v = at;
      for (size_t s = 0; s < sections.size(); ++s) {
        const hlm::dsp::Biquad& b = sections[s];
        const double y = b.b0 * v + z1[s];
        z1[s] = b.b1 * v - b.a1 * y + z2[s];
        z2[s] = b.b2 * v - b.a2 * y;
        v = y;
      }
      at = v;
    }
  };
  pass(false);
  pass(true);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = float(buf[pad + i]);
  return out;
}
}  // namespace

// The filter reads its padding from the signal and writes its output without a padded copy;
// one recursion gives the plain version's bits, the segments agree with them far below float
// precision, at the ends too, for lengths that do not divide into the segments' blocks and
// pads longer than the signal.
TEST(DspFilter, PassesWithoutAPaddedCopyMatchThePlainFilter) {
  const std::vector<hlm::dsp::Biquad> sections{hlm::dsp::butterworth_highpass(360.0, 0.5),
                                               hlm::dsp::butterworth_lowpass(360.0, 40.0)};
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (size_t n : {1, 2, 3, 50, 1001, 300007}) {
    std::vector<float> x(n);
    for (auto& v : x) v = 0.3f + noise(rng);
    for (size_t pad : {size_t(0), size_t(720), n + 5}) {
      const std::vector<float> plain = plain_filtfilt(sections, x, pad);
      std::vector<float> one(n), lanes(x);
      hlm::dsp::filtfilt(sections, x.data(), n, pad, one.data(), /*allow_lanes=*/false);
      hlm::dsp::filtfilt(sections, lanes.data(), n, pad, lanes.data());  // in place
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(one[i], plain[i]) << "n " << n << " pad " << pad << " at " << i;
        ASSERT_NEAR(lanes[i], plain[i], 1e-6) << "n " << n << " pad " << pad << " at " << i;
      }
    }
  }
}

// The lanes hold one to four sections in registers, read padding of any length (short pads
// leave real samples among the positions the last lane filters alone) and split lengths that do
// not divide into 16 segments: each agrees with the plain filter far below float precision.
TEST(DspFilter, LanesMatchThePlainFilterForEveryCascadeLength) {
  const double fs = 360.0;
  const std::vector<hlm::dsp::Biquad> all{
      hlm::dsp::butterworth_highpass(fs, 0.5), hlm::dsp::butterworth_lowpass(fs, 40.0),
      hlm::dsp::butterworth_lowpass(fs, 30.0), hlm::dsp::butterworth_highpass(fs, 1.0)};
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (size_t n : {size_t(300007), size_t(650011)}) {
    std::vector<float> x(n);
    for (auto& v : x) v = -0.7f + noise(rng);
    for (size_t k = 1; k <= all.size(); ++k) {
      const std::vector<hlm::dsp::Biquad> sections(all.begin(), all.begin() + k);
      for (size_t pad : {size_t(0), size_t(5), size_t(720)}) {
        const std::vector<float> plain = plain_filtfilt(sections, x, pad);
        std::vector<float> lanes(n);
        hlm::dsp::filtfilt(sections, x.data(), n, pad, lanes.data());
        for (size_t i = 0; i < n; ++i)
          ASSERT_NEAR(lanes[i], plain[i], 1e-6)
              << "n " << n << " sections " << k << " pad " << pad << " at " << i;
      }
    }
  }
}

TEST(DspFilter, RefusesMoreSectionsThanItKeepsInRegisters) {
  const std::vector<hlm::dsp::Biquad> five(5, hlm::dsp::butterworth_lowpass(360.0, 40.0));
  std::vector<float> x(100, 1.0f);
  EXPECT_THROW(hlm::dsp::filtfilt(five, x.data(), x.size(), 10, x.data()), hlm::InternalError);
}

// No sections: the signal as it is, however long (no lanes are set up for an empty cascade).
TEST(DspFilter, AnEmptyCascadeLeavesTheSignal) {
  std::vector<float> x(5000), out(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.01 * double(i)));
  hlm::dsp::filtfilt({}, x.data(), x.size(), 100, out.data());
  EXPECT_EQ(out, x);
}
