// The QRS detector's pause search (find_beats_in_pauses) on hand-made envelopes at the
// detector's internal 200 Hz, and one lead's signed slow band at half that rate: regular beats
// every 0.8 s, each followed by its T wave, and one interval of two beats' length holding
// whatever the case puts there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dsp/qrs_envelope.h"
#include "dsp/qrs_pause_search.h"
#include "dsp/qrs_sinus_interval.h"

namespace {

using hlm::dsp::qrs::Candidate;
using hlm::dsp::qrs::kRateHz;

int64_t at(double seconds) { return int64_t(seconds * kRateHz + 0.5); }

struct Trace {
  explicit Trace(double seconds = 30.0)
      : main(at(seconds), 0.01f),
        slow(at(seconds), 0.05f),
        band(at(seconds) / hlm::dsp::qrs::kSlowStretch, 0.0f) {}
  std::vector<float> main, slow, band;
  std::vector<Candidate> beats;

  // A wave in the signed band: a Gaussian of `height`.
  void wave(double centre_s, double width_s, float height) {
    const double rate = kRateHz / hlm::dsp::qrs::kSlowStretch;
    for (int64_t j = 0; j < int64_t(band.size()); ++j) {
      const double u = (double(j) / rate - centre_s) / width_s;
      band[j] += height * float(std::exp(-0.5 * u * u));
    }
  }

  void bump(double centre_s, double width_s, float main_height, float slow_height) {
    for (int64_t i = 0; i < int64_t(main.size()); ++i) {
      const double u = (double(i) / kRateHz - centre_s) / width_s;
      const float g = float(std::exp(-0.5 * u * u));
      main[i] += main_height * g;
      slow[i] += slow_height * g;
    }
  }
  // The record ends at `seconds`.
  void end_at(double seconds) {
    main.resize(at(seconds));
    slow.resize(at(seconds));
    band.resize(at(seconds) / hlm::dsp::qrs::kSlowStretch);
  }
  // A beat and its T wave 0.25 s later.
  void beat(double t) {
    bump(t, 0.03, 1.0f, 1.0f);
    bump(t + 0.25, 0.05, 0.15f, 0.4f);
    wave(t, 0.015, 1.0f);
    wave(t + 0.25, 0.05, 0.3f);
    beats.push_back({at(t), 1.0f, 1.0f, 1.0f});
  }
};

// Beats every 0.8 s up to 1 s before the record's end (30 s) but those at `skipped` (their
// intervals doubled), and `extra`.
Trace rhythm_skipping(std::vector<double> skipped, std::vector<double> extra = {},
                      double seconds = 30.0) {
  Trace t(seconds);
  for (int k = 0; k * 0.8 < seconds - 1.0; ++k) {
    const double s = k * 0.8;
    for (const double e : extra)
      if (e < s && e > s - 0.8) t.beat(e);
    bool skip = false;
    for (const double x : skipped) skip = skip || std::fabs(s - x) < 0.01;
    if (!skip) t.beat(s);
  }
  return t;
}

// The envelopes alone: no lead's waves (qrs_pause_waves.h).
std::vector<Candidate> search(const Trace& t) {
  static const std::vector<hlm::dsp::qrs::LeadEnvelope> no_leads;
  static const std::vector<std::vector<float>> no_weights;
  return hlm::dsp::qrs::find_beats_in_pauses(t.beats, {t.main, t.slow, {no_leads, no_weights}});
}

// The envelopes and the trace's band as one lead's waves.
std::vector<Candidate> search_with_waves(const Trace& t) {
  std::vector<hlm::dsp::qrs::LeadEnvelope> lead(1);
  lead[0].band = t.band;
  const std::vector<std::vector<float>> weight = {{1.0f}};
  return hlm::dsp::qrs::find_beats_in_pauses(t.beats, {t.main, t.slow, {lead, weight}});
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

TEST(QrsPauseSearch, SearchesThePauseARecordEndsIn) {
  Trace t = rhythm_skipping({28.8});  // the last beat at 28.0 s, the record 30 s long
  t.bump(28.5, 0.05, 0.2f, 0.6f);
  const std::vector<Candidate> out = search(t);
  EXPECT_EQ(out.size(), t.beats.size() + 1);
  EXPECT_TRUE(has_beat_near(out, 28.5));
}

// The stretch after the last beat (28.8 s) is searched before it is a pause: ending 0.7 s and
// 1 s after it. Its peak is sought up to 0.85 sinus intervals after that beat (29.48 s); the wave
// may fall again after that, as long as the record shows it (29.45 s).
TEST(QrsPauseSearch, SearchesTheStretchARecordEndsInBeforeItIsAPause) {
  for (const auto& [wave, end] : {std::pair{29.2, 29.5}, {29.45, 29.8}}) {
    Trace t = rhythm_skipping({});
    t.bump(wave, 0.05, 0.2f, 0.6f);
    t.end_at(end);
    const std::vector<Candidate> out = search(t);
    EXPECT_EQ(out.size(), t.beats.size() + 1) << wave;
    EXPECT_TRUE(has_beat_near(out, wave)) << wave;
  }
}

TEST(QrsPauseSearch, TakesNoWaveTheRecordsEndCutsOff) {
  Trace t = rhythm_skipping({});
  t.bump(29.52, 0.05, 0.2f, 0.6f);  // still rising where the record ends
  t.end_at(29.5);
  EXPECT_EQ(search(t).size(), t.beats.size());
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

TEST(QrsPauseSearch, DoesNotSearchTheCompensatoryPauseAfterAPrematureBeat) {
  // A premature beat at 10.7 s, then nothing until 12.0 s: the two intervals around it add up
  // to two sinus intervals, the compensatory pause of an ectopic beat the thresholds found.
  Trace t = rhythm_skipping({11.2}, {10.7});
  t.bump(11.4, 0.05, 0.2f, 0.6f);
  EXPECT_EQ(search(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, SearchesAPauseAfterAnEarlyBeatThatIsLongerThanACompensatoryOne) {
  // A beat 0.4 s early at 10.8 s (a sinus beat on the rhythm's swings, or a premature one),
  // then nothing until 12.8 s: three sinus intervals around it, so another beat is missing.
  Trace t = rhythm_skipping({11.2, 12.0}, {10.8});
  t.bump(11.7, 0.05, 0.2f, 0.6f);
  const std::vector<Candidate> out = search(t);
  EXPECT_EQ(out.size(), t.beats.size() + 1);
  EXPECT_TRUE(has_beat_near(out, 11.7));
}

// A small wide beat on the T wave's tail: in the envelopes it stands no taller than the floor
// (0.05 of the beats in the main band), in the waves half the beats' amplitude above the T wave.
Trace small_wide_beat_after(double opening_s) {
  Trace t = rhythm_skipping({opening_s + 0.8});
  t.bump(opening_s + 0.4, 0.05, 0.05f, 0.1f);
  t.wave(opening_s + 0.4, 0.05, -0.5f);
  return t;
}

TEST(QrsPauseSearch, FindsASmallWideBeatOnTheTWaveInTheWaves) {
  const Trace t = small_wide_beat_after(11.2);
  EXPECT_EQ(search(t).size(), t.beats.size());  // the envelopes alone miss it
  const std::vector<Candidate> out = search_with_waves(t);
  EXPECT_EQ(out.size(), t.beats.size() + 1);
  EXPECT_TRUE(has_beat_near(out, 11.6));
}

TEST(QrsPauseSearch, TakesNoBlockedPWaveInTheWavesForABeat) {
  // The P wave of a blocked sinus impulse: 0.3 of the beats' amplitude in the band, under the
  // waves' floor, though it adds to both envelopes as a small beat would.
  Trace t = rhythm_skipping({12.0});
  t.wave(12.0 - 0.2, 0.025, 0.3f);
  t.bump(12.0 - 0.2, 0.025, 0.05f, 0.1f);
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, ReadsNoWavesAfterABeatUnlikeTheRegularOnes) {
  // The same, after a beat inverted and wider (a ventricular one), whose own waves follow it.
  Trace t = small_wide_beat_after(11.2);
  t.wave(11.2, 0.015, -1.0f);
  t.wave(11.2, 0.04, -1.0f);
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, ExpectsTheTWaveLaterAfterALongerInterval) {
  // The beat at 12.0 s follows a doubled interval, so its T wave (twice the trace's, for a clear
  // residual) comes sqrt(2) times later and wider, as Bazett's QT has it; in the envelopes it
  // stays under the floors there. Against the regular beats' waves unstretched it would stand
  // 0.6 of the beats' amplitude above them.
  Trace t = rhythm_skipping({11.2, 12.8});
  for (const Candidate& b : t.beats) t.wave(double(b.i) / kRateHz + 0.25, 0.05, 0.3f);
  const double later = 0.25 * std::sqrt(2.0), wider = 0.05 * std::sqrt(2.0);
  t.wave(12.25, 0.05, -0.6f);
  t.wave(12.0 + later, wider, 0.6f);
  t.bump(12.0 + later, wider, 0.05f, 0.1f);
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, TakesNoWaveThatAddsNothingToTheEnvelopes) {
  // A wave as large in the band, where the envelopes hold only what the beat's waves explain
  // (a wave that moved, such as a T wave later after a longer interval).
  Trace t = rhythm_skipping({12.0});
  t.wave(11.6, 0.05, -0.5f);
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

// The found beat of FindsASmallWideBeatOnTheTWaveInTheWaves, with one of its envelopes' rises
// taken away: each is needed on its own.
TEST(QrsPauseSearch, TakesNoWaveWhereTheMainBandRisesOnlyFarFromIt) {
  Trace t = rhythm_skipping({12.0});
  t.wave(11.6, 0.05, -0.5f);
  t.bump(11.6, 0.05, 0.0f, 0.1f);
  t.bump(11.45, 0.01, 0.05f, 0.0f);  // 0.15 s before the wave, alone
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

TEST(QrsPauseSearch, TakesNoWaveWhereTheSlowBandDoesNotRise) {
  Trace t = rhythm_skipping({12.0});
  t.wave(11.6, 0.05, -0.5f);
  t.bump(11.6, 0.05, 0.05f, 0.0f);
  EXPECT_EQ(search_with_waves(t).size(), t.beats.size());
}

// A rhythm that sped up: 6 beats every 1.2 s, each with a late wave 0.75 s after it (a U wave,
// in both envelopes), then `fast` beats every 0.8 s, whose intervals end before that delay, and
// a pause after the last of them holding the same late wave.
Trace slowed_then_fast(int fast) {
  Trace t(6 * 1.2 + fast * 0.8 + 2.0);
  double s = 0.0;
  for (int k = 0; k < 6; ++k, s += 1.2) {
    t.beat(s);
    t.bump(s + 0.75, 0.05, 0.2f, 0.6f);
  }
  for (int k = 0; k < fast; ++k, s += 0.8) t.beat(s);
  t.bump(s - 0.8 + 0.75, 0.05, 0.2f, 0.6f);  // in the pause up to the beat at s + 0.8
  t.beat(s + 0.8);
  return t;
}

// Where the newest regular beats end before a delay, the expectation there comes from older ones
// that reached it, kept among the last 60 regular beats: the slow beats' late wave explains the
// same wave in a pause 30 fast beats later, and no longer once 70 came between.
TEST(QrsPauseSearch, ExpectsWhatOlderRegularBeatsReachedWithinItsHistory) {
  const Trace recent = slowed_then_fast(30);
  EXPECT_EQ(search(recent).size(), recent.beats.size());
  const Trace forgotten = slowed_then_fast(70);
  const std::vector<Candidate> out = search(forgotten);
  EXPECT_EQ(out.size(), forgotten.beats.size() + 1);
  const double pause_opens = double(forgotten.beats[forgotten.beats.size() - 2].i) / kRateHz;
  EXPECT_TRUE(has_beat_near(out, pause_opens + 0.75));
}

// A pause at a record's start, before three regular beats have come, is searched against the
// record's first regular beats read ahead, when the record holds 60 of them (70 s here); a
// record too short for that (30 s) leaves it alone.
TEST(QrsPauseSearch, SearchesAPauseAtTheStartAgainstTheRegularBeatsAhead) {
  for (const double seconds : {70.0, 30.0}) {
    Trace t = rhythm_skipping({2.4}, {}, seconds);
    t.bump(1.6 + 0.5, 0.05, 0.2f, 0.6f);  // a small wide PVC 0.5 s after the beat at 1.6 s
    const std::vector<Candidate> out = search(t);
    EXPECT_EQ(has_beat_near(out, 2.1), seconds == 70.0) << seconds << " s";
    EXPECT_EQ(out.size(), t.beats.size() + (seconds == 70.0 ? 1 : 0)) << seconds << " s";
  }
}

// An inverted wide wave 0.45 s after the beat that opens a pause: 0.8 of the beats' amplitude
// beside the T wave in the waves, a little in the main band, nothing in the slow envelope (as an
// inverted ventricular beat on an upright T wave, or a T wave that moved). `pvcs`: premature
// beats the thresholds took before it, each 0.45 s after a sinus beat with its compensatory
// pause, as tall as the beats in both envelopes and in the band `pvc_height` times that wave.
// `first_pvc`: where the first of them comes, 3.2 s apart; `seconds`: the record's length.
Trace wave_in_a_pause_after(int pvcs, float pvc_height, double first_pvc = 4.45,
                            double seconds = 30.0) {
  std::vector<double> skipped = {12.0};
  for (int k = 0; k < pvcs; ++k) skipped.push_back(first_pvc + 0.35 + 3.2 * k);
  Trace t = rhythm_skipping(skipped, {}, seconds);
  for (int k = 0; k < pvcs; ++k) {
    const double pvc = first_pvc + 3.2 * k;
    t.bump(pvc, 0.04, 1.0f, 1.0f);
    t.wave(pvc, 0.04, pvc_height * -0.8f);
    t.beats.push_back({at(pvc), 1.0f, 1.0f, 1.0f});
  }
  std::sort(t.beats.begin(), t.beats.end(),
            [](const Candidate& a, const Candidate& b) { return a.i < b.i; });
  t.wave(11.65, 0.04, -0.8f);
  t.bump(11.65, 0.04, 0.05f, 0.0f);
  return t;
}

TEST(QrsPauseSearch, TakesAWaveOfTheFormOfEarlierPrematureBeats) {
  const Trace t = wave_in_a_pause_after(2, 1.0f);
  const std::vector<Candidate> out = search_with_waves(t);
  EXPECT_EQ(out.size(), t.beats.size() + 1);
  EXPECT_TRUE(has_beat_near(out, 11.65));
  // One such beat before it is not a form the record keeps showing; premature beats of another
  // form (upright) are not it; without any, the wave is what a moved T wave would be.
  for (const auto& [pvcs, height] : {std::pair{1, 1.0f}, {2, -1.0f}, {0, 1.0f}}) {
    const Trace other = wave_in_a_pause_after(pvcs, height);
    EXPECT_EQ(search_with_waves(other).size(), other.beats.size()) << pvcs << " " << height;
  }
}

// Premature beats that come only after the wave: their forms stand in where the record holds 60
// regular beats (70 s; the look-ahead), as the first regular beats do. A 30-s record is left as
// it is. One premature beat before the wave, in a 70-s record, is still one form (the look-ahead
// does not count it again).
TEST(QrsPauseSearch, TakesAWaveOfTheFormOfPrematureBeatsLaterInTheRecord) {
  for (const double seconds : {70.0, 30.0}) {
    const Trace t = wave_in_a_pause_after(2, 1.0f, /*first_pvc=*/16.45, seconds);
    const std::vector<Candidate> out = search_with_waves(t);
    EXPECT_EQ(has_beat_near(out, 11.65), seconds == 70.0) << seconds << " s";
    EXPECT_EQ(out.size(), t.beats.size() + (seconds == 70.0 ? 1 : 0)) << seconds << " s";
  }
  const Trace one_before = wave_in_a_pause_after(1, 1.0f, /*first_pvc=*/4.45, 70.0);
  EXPECT_EQ(search_with_waves(one_before).size(), one_before.beats.size());
}

// A triplet the thresholds missed whole, between the beats at 11.2 and 13.6 s (those at 12.0 and
// 12.8 s skipped): each beat at its time with its main-band and slow-band heights and the same
// inverted wave. Each is found, and nothing else.
struct RunBeat {
  double at_s;
  float main, slow;
};
void expect_the_run_found(const std::vector<RunBeat>& run) {
  Trace t = rhythm_skipping({12.0, 12.8});
  for (const RunBeat& b : run) {
    t.bump(b.at_s, 0.04, b.main, b.slow);
    t.wave(b.at_s, 0.03, -0.8f);
  }
  const std::vector<Candidate> out = search_with_waves(t);
  for (const RunBeat& b : run) EXPECT_TRUE(has_beat_near(out, b.at_s)) << b.at_s << " s";
  EXPECT_EQ(out.size(), t.beats.size() + run.size());
}

// A triplet the thresholds missed whole, 0.41 s apart (about half the sinus interval of 0.8 s):
// the pause search takes its tallest beat (the third), then in the pause left before it the
// taller of the other two (the first). The second lies between them, 1.025 sinus intervals
// apart: the run search after a premature beat reads a gap from kPremature (0.85) on (it read
// one from 1.05 on before a beat the thresholds took), so it is found there.
TEST(QrsPauseSearch, FindsATripletsMiddleBeatBetweenTwoItFound) {
  expect_the_run_found({{11.61, 0.55f, 0.9f}, {12.02, 0.45f, 0.9f}, {12.43, 0.6f, 0.9f}});
}

// The same triplet with its second beat standing in the waves alone (nothing in the slow
// envelope): in the pause left before the third, the search takes it only on the third's form
// closely (Window::of_form), the record having no premature beats to match it with; from it the
// first, a run's first beat before a beat on time.
TEST(QrsPauseSearch, TakesABeatOfTheFoundBeatsFormInThePauseBeforeIt) {
  expect_the_run_found({{11.61, 0.3f, 0.9f}, {12.02, 0.45f, 0.0f}, {12.43, 0.6f, 0.9f}});
}

// The sinus interval from the spans around premature beats (qrs_sinus_interval.h), in samples at
// the detector's rate: a full compensatory pause measures it; spans of one interval around most of
// the last 8 premature beats halve it (bigeminy taken for the rhythm), around 6 of them not.
TEST(QrsSinusInterval, ReadsTheSpansAroundPrematureBeats) {
  using hlm::dsp::qrs::SinusInterval;
  SinusInterval doubled(280.0f);  // 1.4 s: bigeminy's sinus beat to sinus beat
  for (int k = 0; k < 7; ++k) doubled.see_around_premature(282.0f);
  EXPECT_FLOAT_EQ(doubled.value(), 141.0f);

  SinusInterval rare(280.0f);  // two interpolated beats among 8 premature ones are not enough
  for (int k = 0; k < 8; ++k) rare.see_around_premature(k % 4 == 0 ? 560.0f : 282.0f);
  EXPECT_FLOAT_EQ(rare.value(), 280.0f);

  SinusInterval measured(160.0f);  // 0.8 s; full compensatory pauses of 0.9 s intervals
  for (int k = 0; k < 5; ++k) measured.see_around_premature(360.0f);
  EXPECT_FLOAT_EQ(measured.value(), 180.0f);

  // Ventricular runs at 0.55 of a 0.7 s sinus interval: the span around a run's inner beat is
  // two coupling intervals, about one sinus interval, beat after beat where runs are frequent.
  SinusInterval runs(140.0f);
  for (int k = 0; k < 8; ++k) runs.see_around_premature(154.0f, /*in_a_run=*/true);
  EXPECT_FLOAT_EQ(runs.value(), 140.0f);
  for (int k = 0; k < 7; ++k) runs.see_around_premature(154.0f);
  EXPECT_FLOAT_EQ(runs.value(), 77.0f);
}

// A first interval too long (0.93 s where the sinus rhythm is 0.706 s, as late-coupled bigeminy's
// missed beats make it): spans of two sinus intervals are under two of it, and 7 in a row set
// their half, as long as no sinus interval confirmed the first. A confirmed interval stands. The
// interval a sinus interval first bore out is kept (the pause search starts its second walk
// from it): none while only spans were seen.
TEST(QrsSinusInterval, TakesShortSpansAroundPrematureBeatsBeforeAnIntervalIsConfirmed) {
  using hlm::dsp::qrs::SinusInterval;
  SinusInterval guessed(186.0f);
  for (int k = 0; k < 6; ++k) guessed.see_around_premature(282.0f);
  EXPECT_FLOAT_EQ(guessed.value(), 186.0f);
  guessed.see_around_premature(282.0f);
  EXPECT_FLOAT_EQ(guessed.value(), 141.0f);
  EXPECT_FLOAT_EQ(guessed.first_confirmed(), 0.0f);
  guessed.see(142.0f, false);
  EXPECT_FLOAT_EQ(guessed.first_confirmed(), 141.0f);

  SinusInterval confirmed(186.0f);
  confirmed.see(186.0f, false);
  for (int k = 0; k < 8; ++k) confirmed.see_around_premature(282.0f);
  EXPECT_FLOAT_EQ(confirmed.value(), 186.0f);
  EXPECT_FLOAT_EQ(confirmed.first_confirmed(), 186.0f);

  // Spans under one interval (two premature beats in a row) are not the spans meant.
  SinusInterval couplets(186.0f);
  for (int k = 0; k < 8; ++k) couplets.see_around_premature(150.0f);
  EXPECT_FLOAT_EQ(couplets.value(), 186.0f);
}

// A rhythm a third slower (intervals 1.4 of the old): 8 in a row set the new interval, so the
// pause search's regular beats, which a sinus interval follows, are not lost; a premature beat
// among them (the gaps around it may hide another) starts the count again.
TEST(QrsSinusInterval, FollowsARhythmAThirdSlower) {
  using hlm::dsp::qrs::SinusInterval;
  SinusInterval slower(100.0f);
  for (int k = 0; k < 7; ++k) slower.see(140.0f, false);
  EXPECT_FLOAT_EQ(slower.value(), 100.0f);
  slower.see(140.0f, false);
  EXPECT_FLOAT_EQ(slower.value(), 140.0f);

  SinusInterval interrupted(100.0f);
  for (int k = 0; k < 12; ++k) interrupted.see(k == 6 ? 60.0f : 140.0f, k == 7);
  EXPECT_FLOAT_EQ(interrupted.value(), 100.0f);
}

}  // namespace
