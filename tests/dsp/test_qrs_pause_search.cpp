// The QRS detector's pause search (find_beats_in_pauses) on hand-made envelopes at the
// detector's internal 200 Hz: regular beats every 0.8 s, each followed by its T wave, and one
// interval of two beats' length holding whatever the case puts there.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsp/qrs_envelope.h"
#include "dsp/qrs_pause_search.h"

namespace {

using hlm::dsp::qrs::Candidate;
using hlm::dsp::qrs::kRateHz;

int64_t at(double seconds) { return int64_t(seconds * kRateHz + 0.5); }

struct Trace {
  std::vector<float> main = std::vector<float>(at(30.0), 0.01f);
  std::vector<float> slow = std::vector<float>(at(30.0), 0.05f);
  std::vector<Candidate> beats;

  void bump(double centre_s, double width_s, float main_height, float slow_height) {
    for (int64_t i = 0; i < int64_t(main.size()); ++i) {
      const double u = (double(i) / kRateHz - centre_s) / width_s;
      const float g = float(std::exp(-0.5 * u * u));
      main[i] += main_height * g;
      slow[i] += slow_height * g;
    }
  }
  // A beat and its T wave 0.25 s later.
  void beat(double t) {
    bump(t, 0.03, 1.0f, 1.0f);
    bump(t + 0.25, 0.05, 0.15f, 0.4f);
    beats.push_back({at(t), 1.0f, 1.0f, 1.0f});
  }
};

// Beats every 0.8 s up to 29 s but those at `skipped` (their intervals doubled), and `extra`.
Trace rhythm_skipping(std::vector<double> skipped, std::vector<double> extra = {}) {
  Trace t;
  for (int k = 0; k * 0.8 < 29.0; ++k) {
    const double s = k * 0.8;
    for (const double e : extra)
      if (e < s && e > s - 0.8) t.beat(e);
    bool skip = false;
    for (const double x : skipped) skip = skip || std::fabs(s - x) < 0.01;
    if (!skip) t.beat(s);
  }
  return t;
}

std::vector<Candidate> search(const Trace& t) {
  return hlm::dsp::qrs::find_beats_in_pauses(t.beats, {t.main, t.slow});
}

bool has_beat_near(const std::vector<Candidate>& beats, double seconds) {
  for (const Candidate& c : beats)
    if (std::llabs(c.i - at(seconds)) <= at(0.05)) return true;
  return false;
}

TEST(QrsPauseSearch, FindsAWideBeatTheThresholdsMissedInItsCompensatoryPause) {
  Trace t = rhythm_skipping({12.0});
  t.bump(11.2 + 0.5, 0.05, 0.2f, 0.6f);  // a small wide PVC 0.5 s after the beat at 11.2 s
  const std::vector<Candidate> out = search(t);
  EXPECT_EQ(out.size(), t.beats.size() + 1);
  EXPECT_TRUE(has_beat_near(out, 11.7));
}

TEST(QrsPauseSearch, TakesNothingFromAPauseThatHoldsOnlyTheBeatsOwnWaves) {
  const Trace t = rhythm_skipping({12.0});
  EXPECT_EQ(search(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, TakesNoBlockedPWaveForABeat) {
  Trace t = rhythm_skipping({12.0});
  t.bump(12.0 - 0.2, 0.025, 0.1f, 0.1f);  // the P wave of the sinus impulse that was blocked
  EXPECT_EQ(search(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, TakesNoTailThatFallsFromThePausesStart) {
  Trace t = rhythm_skipping({12.0});
  t.bump(11.2 + 0.2, 0.08, 0.3f, 0.8f);  // a broad wave the regular beats do not have, cut off
  // by the search window's start: the highest unexplained point is its falling edge
  for (int64_t i = at(11.2); i < at(11.4); ++i) t.main[i] = std::max(t.main[i], 0.3f);
  EXPECT_EQ(search(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, DoesNotSearchThePauseAfterAPrematureBeat) {
  // A premature beat at 10.8 s, then nothing until 12.8 s: a pause after a premature beat is
  // its own (the compensatory pause of an ectopic beat the thresholds found).
  Trace t = rhythm_skipping({11.2, 12.0}, {10.8});
  t.bump(11.7, 0.05, 0.2f, 0.6f);
  EXPECT_EQ(search(t).size(), t.beats.size());
}

}  // namespace
