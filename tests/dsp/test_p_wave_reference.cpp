// The P wave against the record's late beats: the late beats are the tenth with the longest
// interval before them; where atrial premature beats with another P wave are most of a record,
// they still read unlike the reference and the sinus beats like it, which a reference made of
// every beat does not do; a beat without a window reads as the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "hlm/dsp/beat_window.h"
#include "hlm/dsp/p_wave_reference.h"
#include "hlm/errors.h"

namespace {

double gauss(double t, double centre, double width) {
  return std::exp(-0.5 * std::pow((t - centre) / width, 2));
}

const hlm::dsp::BeatWindowOptions kWindow;  // 64 points, 0.25 s before to 0.40 s after

// One window row per beat: a QRS, a T wave, and the P wave p_of(i) gives beat i (value at t
// seconds from the R peak), with a little of each beat's own ripple so no two are alike.
std::vector<float> windows_of(size_t beats, const std::function<double(size_t, double)>& p_of) {
  std::vector<float> out;
  const double span = kWindow.before_seconds + kWindow.after_seconds;
  for (size_t i = 0; i < beats; ++i)
    for (int j = 0; j < kWindow.points; ++j) {
      const double t = -kWindow.before_seconds + span * j / (kWindow.points - 1);
      out.push_back(float(gauss(t, 0, 0.012) + 0.3 * gauss(t, 0.25, 0.05) + p_of(i, t) +
                          0.005 * std::sin(double(i) + 7.0 * t)));
    }
  return out;
}

std::vector<int64_t> every_row(size_t n) {
  std::vector<int64_t> row(n);
  for (size_t i = 0; i < n; ++i) row[i] = int64_t(i);
  return row;
}

// Sinus P 170 ms before the R peak; an atrial premature beat's P inverted and 140 ms before it.
double sinus_p(double t) { return 0.15 * gauss(t, -0.17, 0.025); }
double ectopic_p(double t) { return -0.12 * gauss(t, -0.14, 0.02); }

}  // namespace

TEST(LateBeats, AreTheTenthWithTheLongestIntervalInBeatOrder) {
  std::vector<float> rr(40, 0.8f);
  rr[0] = 0.0f;  // no interval before the first beat
  rr[7] = 1.9f, rr[21] = 1.5f, rr[33] = 1.7f, rr[35] = 1.2f;
  std::vector<int64_t> row = every_row(rr.size());
  // 39 beats qualify: the 4 longest (a tenth, rounded up).
  EXPECT_EQ(hlm::late_beats(rr, row), (std::vector<size_t>{7, 21, 33, 35}));
  row[33] = -1;  // no window: not a late beat
  // 38 qualify, still 4: the fourth longest ties at 0.8 s, and the earliest of them wins.
  EXPECT_EQ(hlm::late_beats(rr, row), (std::vector<size_t>{1, 7, 21, 35}));
  EXPECT_EQ(hlm::late_beats({0.0f, 0.7f}, every_row(2)), (std::vector<size_t>{1}));
  EXPECT_TRUE(hlm::late_beats({0.0f}, every_row(1)).empty());
  EXPECT_TRUE(hlm::late_beats({}, {}).empty());
}

// A record of 100 beats, 78 of them atrial premature beats coming at a steady short interval
// and 22 sinus beats ending longer pauses (as in MIT-BIH 232).
TEST(LatePWave, TellsSinusFromEctopicBeatsThatAreMostOfTheRecord) {
  const size_t n = 100;
  auto sinus = [](size_t i) { return i % 9 == 0 || i % 9 == 4 || i == 99; };
  std::vector<float> rr(n);
  size_t sinus_count = 0;
  for (size_t i = 0; i < n; ++i) {
    rr[i] = i == 0 ? 0.0f : sinus(i) ? float(1.6 + 0.01 * double(i % 5)) : 0.9f;
    sinus_count += sinus(i);
  }
  ASSERT_EQ(sinus_count, 23u);
  const auto windows =
      windows_of(n, [&](size_t i, double t) { return sinus(i) ? sinus_p(t) : ectopic_p(t); });
  const auto row = every_row(n);
  const auto late = hlm::late_beats(rr, row);
  ASSERT_EQ(late.size(), 10u);
  for (size_t i : late) EXPECT_TRUE(sinus(i)) << i;
  const auto score = hlm::late_p_wave_correlations(windows.data(), kWindow, row, late);
  ASSERT_EQ(score.size(), n);
  for (size_t i = 0; i < n; ++i) {
    if (sinus(i))
      EXPECT_GT(score[i], 0.95f) << i;
    else
      EXPECT_LT(score[i], 0.0f) << i;
  }
  // Every beat as the reference: its median P wave is the ectopic one, and the scores invert.
  std::vector<size_t> everyone(n);
  for (size_t i = 0; i < n; ++i) everyone[i] = i;
  const auto all = hlm::late_p_wave_correlations(windows.data(), kWindow, row, everyone);
  EXPECT_LT(all[0], 0.0f);
  EXPECT_GT(all[1], 0.95f);
}

TEST(LatePWave, ABeatWithoutAWindowOrARecordWithoutLateBeatsReadsAsTheReference) {
  const auto windows =
      windows_of(3, [](size_t i, double t) { return i == 1 ? ectopic_p(t) : sinus_p(t); });
  // Beat 1's window is gone (row -1): it reads 1, and beat 2 uses row 1 (the ectopic window).
  const std::vector<int64_t> row = {0, -1, 1};
  const auto score = hlm::late_p_wave_correlations(windows.data(), kWindow, row, {0});
  EXPECT_GT(score[0], 0.99f);
  EXPECT_EQ(score[1], 1.0f);
  EXPECT_LT(score[2], 0.0f);
  // Late beats without a window leave no reference: every beat reads 1.
  const auto none = hlm::late_p_wave_correlations(windows.data(), kWindow, row, {1});
  EXPECT_EQ(none, std::vector<float>(3, 1.0f));
}

TEST(LatePWave, WindowsThatDoNotReachThePWaveAreRefused) {
  EXPECT_TRUE(hlm::covers_p_wave(kWindow));
  hlm::dsp::BeatWindowOptions short_window = kWindow;
  short_window.before_seconds = 0.2;
  EXPECT_FALSE(hlm::covers_p_wave(short_window));
  hlm::dsp::BeatWindowOptions coarse = kWindow;
  coarse.points = 8;  // 0.65 s in 7 steps: 2 points between 250 and 90 ms before the R peak
  EXPECT_FALSE(hlm::covers_p_wave(coarse));
  const std::vector<float> windows(64, 0.0f);
  EXPECT_THROW(hlm::late_p_wave_correlations(windows.data(), short_window, {0}, {0}),
               hlm::InternalError);
}
