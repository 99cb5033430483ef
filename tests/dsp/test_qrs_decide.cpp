// The QRS detector's decision on hand-made candidates, and its last step, prune_split_intervals,
// on hand-made beat lists (positions at the detector's internal 200 Hz): which weak peaks between
// strong beats are dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dsp/qrs_decide.h"
#include "dsp/qrs_envelope.h"

namespace {

using hlm::dsp::qrs::Candidate;
using hlm::dsp::qrs::decide;
using hlm::dsp::qrs::kRateHz;
using hlm::dsp::qrs::prune_split_intervals;

int64_t at(double seconds) { return int64_t(seconds * kRateHz + 0.5); }

// Strong beats every 0.8 s from 0 s to 16 s, plus `extra`, in time order.
std::vector<Candidate> rhythm_with(const std::vector<Candidate>& extra) {
  std::vector<Candidate> beats;
  for (int k = 0; k <= 20; ++k) beats.push_back({at(0.8 * k), 1.0f, 1.0f, 1.0f});
  beats.insert(beats.end(), extra.begin(), extra.end());
  std::sort(beats.begin(), beats.end(),
            [](const Candidate& a, const Candidate& b) { return a.i < b.i; });
  return beats;
}

bool kept(const std::vector<Candidate>& beats, int64_t i) {
  for (const Candidate& c : beats)
    if (c.i == i) return true;
  return false;
}

TEST(QrsPrune, DropsAWeakPeakJustBeforeAStrongBeatAfterALongGap) {
  // A tall P wave 0.2 s before each of four beats in a row: the median interval is then split
  // too, which the ratio rule alone cannot see.
  std::vector<Candidate> p_waves;
  for (int k = 8; k < 12; ++k) p_waves.push_back({at(0.8 * k - 0.2), 0.45f, 0.3f, 0.4f});
  const std::vector<Candidate> out = prune_split_intervals(rhythm_with(p_waves));
  for (const Candidate& p : p_waves) EXPECT_FALSE(kept(out, p.i)) << p.i;
  EXPECT_EQ(out.size(), 21u);
}

TEST(QrsPrune, KeepsASmallSteepQrsBeforeATallFlatTWaveTakenForABeat) {
  // The small QRS of beat 10 is steeper than the tall wave 0.22 s after it: that wave is its T
  // wave, not the QRS of a P wave, so the QRS stays.
  std::vector<Candidate> beats = rhythm_with({{at(8.0 + 0.22), 1.0f, 0.3f, 1.0f}});
  beats[10].height = 0.45f;
  EXPECT_TRUE(kept(prune_split_intervals(beats), beats[10].i));
  // The same peak, flatter than the wave after it, is taken for its P wave.
  beats[10].slope = 0.2f;
  EXPECT_FALSE(kept(prune_split_intervals(beats), beats[10].i));
}

TEST(QrsPrune, KeepsAWeakPrematureBeatFollowedByAPause) {
  // Bigeminy with small PVCs 0.45 s after each sinus beat, the sinus beats 1.2 s apart: the
  // pause comes after the weak beat, so neither rule takes it.
  std::vector<Candidate> beats;
  for (int k = 0; k < 20; ++k) {
    beats.push_back({at(1.2 * k), 1.0f, 1.0f, 1.0f});
    beats.push_back({at(1.2 * k + 0.45), 0.4f, 0.3f, 0.9f});
  }
  EXPECT_EQ(prune_split_intervals(beats).size(), beats.size());
}

TEST(QrsPrune, KeepsAWeakBeatWhenTheStrongOneComesLaterThanAPWaveCould) {
  // After a pause of 1.2 s, a weak peak 0.3 s before the next beat: beyond the PR interval,
  // so possibly a beat of its own, and the intervals around it add up to more than one.
  std::vector<Candidate> beats;
  for (int k = 0; k <= 20; ++k)
    beats.push_back({at(0.8 * k + (k > 10 ? 0.4 : 0.0)), 1.0f, 1.0f, 1.0f});
  const Candidate weak{at(0.8 * 11 + 0.4 - 0.3), 0.45f, 0.3f, 0.4f};
  beats.insert(beats.begin() + 11, weak);
  EXPECT_TRUE(kept(prune_split_intervals(beats), weak.i));
  // 0.2 s before it, the same peak is a P wave.
  beats[11].i = at(0.8 * 11 + 0.4 - 0.2);
  EXPECT_FALSE(kept(prune_split_intervals(beats), beats[11].i));
}

TEST(QrsPrune, KeepsAWeakBeatOfAFastRunThatCameSoonAfterTheBeatBeforeIt) {
  // Flutter at 240 bpm (0.25 s), one weak wave 0.3 s after the one before it and 0.2 s before
  // the next: close before a strong beat, but not late in a long interval.
  std::vector<Candidate> beats;
  for (int k = 0; k <= 40; ++k) beats.push_back({at(0.25 * k), 1.0f, 1.0f, 1.0f});
  beats[20].i = at(0.25 * 19 + 0.3);
  beats[20].height = 0.45f;
  beats[21].i = beats[20].i + at(0.2);
  EXPECT_TRUE(kept(prune_split_intervals(beats), beats[20].i));
}

// Beats of height 1 every 0.8 s up to 30 s, a small noise peak between each two, and in
// [artefact_from, artefact_from + 2 s) artefacts of height 8 every 0.3 s in place of the beats.
std::vector<Candidate> beats_around_artefacts(double artefact_from) {
  std::vector<Candidate> c;
  for (int k = 0; 0.8 * k < 30.0; ++k) {
    const double t = 0.8 * k;
    if (t < artefact_from || t >= artefact_from + 2.0) c.push_back({at(t), 1.0f, 1.0f, 1.0f});
    c.push_back({at(t + 0.5), 0.05f, 0.05f, 0.05f});
  }
  for (double t = artefact_from; t < artefact_from + 2.0; t += 0.3)
    c.push_back({at(t + 0.05), 8.0f, 8.0f, 8.0f});
  std::sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.i < b.i; });
  return c;
}

// Artefacts taken for beats raise the beat level above every beat after them, and only beats
// taken lower it again: a gap twice as long as search-back's, with nothing found in it, restarts
// the level at its recurring peaks clear of the noise, and every beat after the artefacts is
// found from the first on (the one at 12.0 s lies within the refractory period of the last
// artefact, at 11.85 s).
TEST(QrsDecide, BeatsAfterTallArtefactsAreFoundAgain) {
  const std::vector<Candidate> out = decide(beats_around_artefacts(10.0), {});
  size_t after = 0, expected = 0;
  for (const Candidate& b : out) after += b.i > at(12.05) && b.height == 1.0f;
  for (int k = 0; 0.8 * k < 30.0; ++k) expected += 0.8 * k > 12.05;
  EXPECT_EQ(after, expected);
}

// The restart takes nothing from a pause that holds no recurring peak clear of the noise: 4 s of
// noise peaks, once with one artefact over three times their height in it (under search-back's
// threshold), stay empty.
TEST(QrsDecide, ALongPauseWithOneArtefactStaysEmpty) {
  for (const bool artefact : {false, true}) {
    std::vector<Candidate> c;
    for (int k = 0; 0.8 * k < 30.0; ++k) {
      const double t = 0.8 * k;
      if (t < 12.0 || t > 16.0) c.push_back({at(t), 1.0f, 1.0f, 1.0f});
      c.push_back({at(t + 0.5), 0.05f, 0.05f, 0.05f});
    }
    if (artefact) c.push_back({at(14.2), 0.17f, 0.17f, 0.17f});
    std::sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.i < b.i; });
    for (const Candidate& b : decide(c, {})) EXPECT_EQ(b.height, 1.0f) << b.i << " " << artefact;
  }
}

}  // namespace
