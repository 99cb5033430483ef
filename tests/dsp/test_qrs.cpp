// QRS detector on synthetic ECG: beats found at any sampling rate, noise in one lead of two,
// argument checks, and speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>

#include "dsp/qrs_envelope.h"
#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/qrs.h"
#include "hlm/dsp/synthetic_ecg.h"
#include "hlm/errors.h"

namespace {
hlm::Record make(double fs, uint64_t seed, double noise_mv = 0.01, double seconds = 180) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = seconds;
  o.sampling_hz = fs;
  o.seed = seed;
  o.pvc_rate = 0.08;
  o.af_fraction = 0.3;
  o.noise_mv = noise_mv;
  return hlm::dsp::synthesize_ecg("q", o);
}

hlm::dsp::MatchCounts score(const hlm::Record& r, const std::vector<int64_t>& det) {
  return hlm::dsp::match_beats(hlm::dsp::reference_beats(r.annotations), det,
                               hlm::dsp::match_window_samples(r.sampling_hz));
}
}  // namespace

TEST(Qrs, FindsCleanSyntheticBeatsAtAnySamplingRate) {
  for (double fs : {128.0, 250.0, 360.0, 500.0, 1000.0}) {
    const hlm::Record r = make(fs, uint64_t(fs));
    const std::vector<float> x = r.physical(0);
    const auto c = score(r, hlm::dsp::detect_qrs(x.data(), x.size(), fs));
    EXPECT_GE(c.sensitivity(), 0.99) << fs << " Hz: FN " << c.fn;
    EXPECT_GE(c.positive_predictivity(), 0.99) << fs << " Hz: FP " << c.fp;
  }
}

TEST(Qrs, PlacesDetectionsOnTheRPeak) {
  const hlm::Record r = make(360, 11);
  const std::vector<float> x = r.physical(0);
  const auto det = hlm::dsp::detect_qrs(x.data(), x.size(), 360);
  const auto ref = hlm::dsp::reference_beats(r.annotations);
  const auto pair = hlm::dsp::pair_beats(ref, det, 54);
  int close = 0, matched = 0;
  for (size_t j = 0; j < det.size(); ++j) {
    if (pair[j] < 0) continue;
    ++matched;
    close += std::abs(det[j] - ref[size_t(pair[j])]) <= 4;  // 11 ms
  }
  EXPECT_GE(close, matched * 95 / 100);
}

TEST(Qrs, SecondLeadRescuesBeatsLostInNoiseOnTheFirst) {
  const hlm::Record r = make(360, 12);
  std::vector<float> x0 = r.physical(0), x1 = r.physical(1);
  // One minute of heavy noise on lead 0 only.
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 0.6f);
  for (size_t i = 60 * 360; i < 120 * 360; ++i) x0[i] += g(rng);
  const auto one = score(r, hlm::dsp::detect_qrs(x0.data(), x0.size(), 360));
  const auto two = score(r, hlm::dsp::detect_qrs({x0.data(), x1.data()}, x0.size(), 360));
  EXPECT_GE(two.sensitivity(), 0.99) << "FN " << two.fn;
  EXPECT_GE(two.positive_predictivity(), 0.99) << "FP " << two.fp;
  EXPECT_LT(two.fn + two.fp, one.fn + one.fp);
}

TEST(Qrs, AFlatStretchInOneLeadDoesNotHideTheBeatsOfTheOther) {
  for (double seconds : {10.0, 180.0}) {
    const hlm::Record r = make(125, 14, 0.01, seconds);
    std::vector<float> x0 = r.physical(0), x1 = r.physical(1);
    std::fill(x1.begin(), x1.begin() + static_cast<ptrdiff_t>(4 * 125), 0.0f);  // lead off
    const auto c = score(r, hlm::dsp::detect_qrs({x0.data(), x1.data()}, x0.size(), 125));
    EXPECT_EQ(c.fn, 0) << seconds << " s record";
    EXPECT_EQ(c.fp, 0) << seconds << " s record";
  }
}

TEST(Qrs, ReturnsNothingForAFlatSignalAndRejectsBadArguments) {
  const std::vector<float> flat(3600, 0.0f);
  EXPECT_TRUE(hlm::dsp::detect_qrs(flat.data(), flat.size(), 360).empty());
  EXPECT_THROW(hlm::dsp::detect_qrs(flat.data(), flat.size(), 0.0), hlm::ConfigError);
  hlm::dsp::QrsOptions o;
  o.fiducial_lead = 1;
  EXPECT_THROW(hlm::dsp::detect_qrs(flat.data(), flat.size(), 360, o), hlm::ConfigError);
}

// The envelope's peak picker against its definition, on a smooth random signal with plateaus
// (equal neighbours) and ties between separate peaks, for separations that are and are not
// powers of two (the sliding maxima are built by doubling) and one beyond the signal's ends.
TEST(QrsEnvelope, LocalMaximaMatchBruteForce) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> step(-1.0f, 1.0f);
  std::vector<float> h(20000);
  float level = 0.0f;
  for (float& x : h) x = level = std::round(4.0f * (0.9f * level + step(rng))) / 4.0f;
  const int64_t m = int64_t(h.size());
  for (int64_t separation : {1, 2, 7, 16, 20, 33}) {
    std::vector<int64_t> expected;
    for (int64_t i = 1; i + 1 < m; ++i) {
      if (!(h[i] > h[i - 1] && h[i] >= h[i + 1])) continue;
      bool best = true;
      for (int64_t j = std::max<int64_t>(0, i - separation); j <= std::min(m - 1, i + separation);
           ++j)
        best = best && (j < i ? h[j] < h[i] : h[j] <= h[i]);
      if (best) expected.push_back(i);
    }
    EXPECT_GT(expected.size(), 100u);
    EXPECT_EQ(hlm::dsp::qrs::local_maxima(h, separation), expected) << separation;
  }
  // A separation far wider than the signal: the whole signal is each peak's window.
  EXPECT_EQ(hlm::dsp::qrs::local_maxima(h, int64_t(1) << 40), hlm::dsp::qrs::local_maxima(h, m));
  const std::vector<float> short_one{0.0f, 2.0f, 1.0f, 3.0f, 0.5f};
  EXPECT_EQ(hlm::dsp::qrs::local_maxima(short_one, 40), std::vector<int64_t>{3});
}
