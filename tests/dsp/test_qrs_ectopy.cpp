// QRS detection through runs of ventricular ectopy: bigeminy and trigeminy with PVCs as tall
// as sinus beats, smaller, wider, or both, at sampling rates from 128 to 1000 Hz and at slow
// and fast sinus rates; frequent multiform PVCs and late-coupled bigeminy. Every PVC of a pattern
// is premature and followed by a pause: the case where a detector that learns the beat level
// and RR from the sinus beats can reject the ectopic ones wholesale.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hlm/dsp/beat_match.h"
#include "hlm/dsp/qrs.h"
#include "hlm/dsp/synthetic_ecg.h"

namespace {

struct Scores {
  hlm::dsp::MatchCounts all, ventricular;
};

Scores detect(const hlm::dsp::SyntheticEcgOptions& o, bool both_leads) {
  const hlm::Record r = hlm::dsp::synthesize_ecg("ectopy", o);
  std::vector<int64_t> detected;
  if (both_leads) {
    const auto leads = r.physical_leads(0);
    std::vector<const float*> pointers;
    for (const auto& lead : leads) pointers.push_back(lead.data());
    detected = hlm::dsp::detect_qrs(pointers, leads[0].size(), o.sampling_hz);
  } else {
    const std::vector<float> x = r.physical(0);
    detected = hlm::dsp::detect_qrs(x.data(), x.size(), o.sampling_hz);
  }
  const int64_t window = hlm::dsp::match_window_samples(o.sampling_hz);
  std::vector<int64_t> ventricular;
  for (const hlm::Annotation& a : r.annotations)
    if (hlm::aami_class(a.code) == hlm::BeatClass::kV) ventricular.push_back(a.sample);
  Scores s;
  s.all = hlm::dsp::match_beats(hlm::dsp::reference_beats(r.annotations), detected, window);
  s.ventricular = hlm::dsp::match_beats(ventricular, detected, window);
  return s;
}

// Every configuration of the grid below, scored; the worst one is named.
struct Grid {
  hlm::dsp::MatchCounts all, ventricular;
  std::string worst;
  double worst_se = 2.0;
};

// A PVC's shape: its amplitude and width as multiples of the generator's own.
struct PvcShape {
  double amplitude, width;
};

// Scores one record into `g` and prints its line; the record with the lowest V Se is kept.
void add_record(Grid& g, const hlm::dsp::SyntheticEcgOptions& o, bool both) {
  const Scores s = detect(o, both);
  g.all += s.all;
  g.ventricular += s.ventricular;
  char pattern[40];
  if (o.pvc_every > 0)
    std::snprintf(pattern, sizeof(pattern), "every %d", o.pvc_every);
  else
    std::snprintf(pattern, sizeof(pattern), "rate %.2f", o.pvc_rate);
  if (o.pvc_run_max > 1)
    std::snprintf(pattern + std::strlen(pattern), sizeof(pattern) - std::strlen(pattern),
                  " runs of up to %d", o.pvc_run_max);
  char line[240];
  std::snprintf(line, sizeof(line),
                "%4.0f Hz %s %3.0f bpm amp %.1f width %.1f forms %d coupling %.2f %s: V Se %.4f "
                "(%lld of %lld), all Se %.4f +P %.4f",
                o.sampling_hz, pattern, o.heart_rate_bpm, o.pvc_amplitude, o.pvc_width, o.pvc_forms,
                o.pvc_coupling, both ? "2 leads" : "1 lead", s.ventricular.sensitivity(),
                (long long)s.ventricular.tp, (long long)(s.ventricular.tp + s.ventricular.fn),
                s.all.sensitivity(), s.all.positive_predictivity());
  std::printf("%s\n", line);
  if (s.ventricular.sensitivity() < g.worst_se)
    g.worst_se = s.ventricular.sensitivity(), g.worst = line;
}

constexpr double kRates[] = {128.0, 250.0, 360.0, 500.0, 1000.0};

// A grid's totals, on one line.
void print_totals(const Grid& g) {
  std::printf("V Se %.4f, all Se %.4f +P %.4f\n", g.ventricular.sensitivity(), g.all.sensitivity(),
              g.all.positive_predictivity());
}

// Bigeminy and trigeminy at every sampling rate, one and two leads; from `onset_seconds` on,
// sinus rhythm alone before it.
Grid run_grid(const std::vector<PvcShape>& shapes, const std::vector<double>& sinus_bpm,
              double onset_seconds = 0.0) {
  Grid g;
  for (const double fs : kRates)
    for (const int every : {2, 3})
      for (const double bpm : sinus_bpm)
        for (const auto [amplitude, width] : shapes)
          for (const bool both : {false, true}) {
            hlm::dsp::SyntheticEcgOptions o;
            o.seconds = 120;
            o.sampling_hz = fs;
            o.seed = uint64_t(fs) * 7 + uint64_t(every * 100 + bpm);
            o.heart_rate_bpm = bpm;
            o.pvc_every = every;
            o.pvc_amplitude = amplitude;
            o.pvc_width = width;
            o.pvc_onset_seconds = onset_seconds;
            add_record(g, o, both);
          }
  std::printf("worst: %s\n", g.worst.c_str());
  return g;
}

// A pattern of ectopy the grids below run: random PVCs at `rate` (every = 0) or every
// `every`-th beat, in `forms` morphologies, coupled from `coupling` of the sinus interval.
struct Pattern {
  double rate;
  int every, forms;
  double coupling;
  int run_max = 1;  // each PVC starts a run of 1 to run_max (couplets and triplets at 3)
};

// Each pattern at every sampling rate, PVC amplitude and sinus rate, one and two leads; from
// `onset_seconds` on, sinus rhythm alone before it.
Grid run_patterns(const std::vector<Pattern>& patterns, const std::vector<double>& amplitudes,
                  const std::vector<double>& sinus_bpm, double onset_seconds = 0.0) {
  Grid g;
  for (const double fs : kRates)
    for (const Pattern& p : patterns)
      for (const double amplitude : amplitudes)
        for (const double bpm : sinus_bpm)
          for (const bool both : {false, true}) {
            hlm::dsp::SyntheticEcgOptions o;
            o.seconds = 120;
            o.sampling_hz = fs;
            o.seed = uint64_t(fs) * 13 + uint64_t(p.every * 1000 + p.forms * 100 + bpm);
            o.heart_rate_bpm = bpm;
            o.pvc_rate = p.rate;
            o.pvc_every = p.every;
            o.pvc_forms = p.forms;
            o.pvc_coupling = p.coupling;
            o.pvc_run_max = p.run_max;
            o.pvc_amplitude = amplitude;
            o.pvc_onset_seconds = onset_seconds;
            add_record(g, o, both);
          }
  std::printf("worst: %s\n", g.worst.c_str());
  return g;
}

// PVCs of the generator's own shape (taller than the sinus beats, about as narrow): found at
// every sampling rate, pattern and sinus rate.
TEST(QrsEctopy, FindsTheTypicalPvcsOfBigeminyAndTrigeminyAtAnyRate) {
  const Grid g = run_grid({{1.0, 1.0}}, {60.0, 110.0});
  EXPECT_GE(g.worst_se, 0.99) << g.worst;
  EXPECT_GE(g.all.sensitivity(), 0.995);
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// PVCs wider (1.8 times the generator's width), smaller (0.4 times its amplitude) or both,
// coupled past the T wave (60 bpm: 0.55-0.65 s after the sinus beat; 85 bpm: 0.39-0.46 s). The main
// band shrinks them to 0.12-0.35 of the sinus beats, below the threshold, and once one is missed
// the median beat height stays with the sinus beats and the doubled RR looks regular. The slow band
// keeps them tall, and the pause after each lets them through (the ectopic path of qrs_decide.h).
// Before it, the small and wide ones were missed wholesale; with its floor at a tenth of the way
// from the noise to the beats, 85 bpm found 87 % of its PVCs (99.3 % now).
TEST(QrsEctopy, FindsWideOrSmallPvcsCoupledPastTheTWave) {
  const Grid g = run_grid({{1.0, 1.0}, {1.0, 1.8}, {0.4, 1.0}, {0.4, 1.8}}, {60.0, 85.0});
  EXPECT_GE(g.worst_se, 0.9) << g.worst;
  EXPECT_GE(g.ventricular.sensitivity(), 0.99);
  EXPECT_GE(g.all.sensitivity(), 0.995);
  EXPECT_GE(g.all.positive_predictivity(), 0.998);
  print_totals(g);
}

// PVCs wider (1.8) or smaller (0.4) coupled within the T wave's reach (110 bpm: 0.30-0.35 s
// after the sinus beat), after 20 s of sinus rhythm, as bigeminy and trigeminy set in. The
// T-wave rule takes each for the sinus beat's T wave (in the main band they stand 0.13-0.35
// of the beats, against 0.1), so they are found on search-back: the compensatory pause makes
// the gap about two sinus intervals, measured on the sinus beats before the run began. Before
// that search (2026-11-29) 2.0 % of them were found.
TEST(QrsEctopy, FindsWideOrSmallPvcsCoupledWithinTheTWaveOnceSinusBeatsCameFirst) {
  const Grid g = run_grid({{1.0, 1.8}, {0.4, 1.0}}, {110.0}, /*onset_seconds=*/20.0);
  EXPECT_GE(g.worst_se, 0.95) << g.worst;
  EXPECT_GE(g.ventricular.sensitivity(), 0.98);
  EXPECT_GE(g.all.sensitivity(), 0.99);
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
  print_totals(g);
}

// AV block from `onset` seconds on, the last of every `every` sinus impulses blocked, at atrial
// rates 60-150 bpm, every sampling rate, the generator's T waves and three times as tall, one
// and two leads: no T wave may be taken for a beat in any record. Every record's counts, summed.
hlm::dsp::MatchCounts av_block_grid(double onset, int every, uint64_t seed_per_hz) {
  hlm::dsp::MatchCounts all;
  for (const double t_wave : {1.0, 3.0})
    for (const double fs : {128.0, 250.0, 360.0, 500.0, 1000.0})
      for (const double bpm : {60.0, 80.0, 100.0, 120.0, 150.0})
        for (const bool both : {false, true}) {
          hlm::dsp::SyntheticEcgOptions o;
          o.seconds = 120;
          o.sampling_hz = fs;
          o.seed = uint64_t(fs) * seed_per_hz + uint64_t(bpm);
          o.heart_rate_bpm = bpm;
          o.av_block_onset_seconds = onset;
          o.av_block_every = every;
          o.t_wave_amplitude = t_wave;
          const Scores s = detect(o, both);
          EXPECT_EQ(s.all.fp, 0) << fs << " Hz, atrial " << bpm << " bpm, T wave x" << t_wave
                                 << ", " << (both ? 2 : 1) << " lead(s)";
          all += s.all;
        }
  return all;
}

// The risk of that search: in 2:1 AV block the ventricular interval doubles at once, so every
// sinus T wave stands alone in a gap of two sinus intervals, as a missed PVC would. No T wave
// may be taken for a beat, with the generator's T waves (0.3 of the R wave) or three times as
// tall. Without the rule that a PVC there stands taller than the sinus beats' own T waves, the
// tall ones gave 2 false beats.
TEST(QrsEctopy, TakesNoTWaveForABeatIn2To1AvBlock) {
  EXPECT_GE(av_block_grid(30.0, 2, 11).sensitivity(), 0.999);
}

// A 3:2 AV block from the record's first beat alternates one sinus interval and two, a T wave
// alone in every long one, as trigeminy does when its PVCs are missed. Starting the pause
// search from the shorter of such intervals, tried for that trigeminy, took 332 of those T
// waves (docs/notebook/qrs-detector.md, 2026-12-06).
TEST(QrsEctopy, TakesNoTWaveForABeatIn3To2AvBlockFromTheFirstBeat) {
  EXPECT_GE(av_block_grid(0.0, 3, 17).sensitivity(), 0.999);
}

// A beat that comes late after a regular beat opens a search of the gap before it, for the first
// beat of a ventricular run (qrs_run_search.cpp, add_first_of_run). Sinus rhythm whose
// intervals swing widely, and atrial fibrillation for half the record, make such gaps all along;
// at every sampling rate, 60-140 bpm, the generator's T waves and three times as tall, one and two
// leads. In sinus rhythm no T wave may be taken for a beat. In atrial fibrillation the detector
// took 16 false beats over these 60 records (all with two leads) before the search; taking every
// wave the search finds, whatever its form, raised them to 34 and took a T wave in sinus rhythm;
// it may add none.
TEST(QrsEctopy, TakesNoTWaveForABeatBeforeALateOne) {
  hlm::dsp::MatchCounts sinus, fibrillation;
  for (const double fs : kRates)
    for (const double bpm : {60.0, 100.0, 140.0})
      for (const double t_wave : {1.0, 3.0})
        for (const double af : {0.0, 0.5})
          for (const bool both : {false, true}) {
            hlm::dsp::SyntheticEcgOptions o;
            o.seconds = 120;
            o.sampling_hz = fs;
            o.seed = uint64_t(fs) * 19 + uint64_t(bpm + 10 * t_wave + 100 * af);
            o.heart_rate_bpm = bpm;
            o.rr_std_seconds = 0.3 * 60.0 / bpm;  // a late beat every few
            o.t_wave_amplitude = t_wave;
            o.af_fraction = af;
            const Scores s = detect(o, both);
            if (af == 0.0) {
              EXPECT_EQ(s.all.fp, 0) << fs << " Hz, " << bpm << " bpm, T wave x" << t_wave << ", "
                                     << (both ? 2 : 1) << " lead(s)";
            }
            (af == 0.0 ? sinus : fibrillation) += s.all;
          }
  std::printf("sinus Se %.4f +P %.4f; AF Se %.4f +P %.4f, %lld false beats\n", sinus.sensitivity(),
              sinus.positive_predictivity(), fibrillation.sensitivity(),
              fibrillation.positive_predictivity(), (long long)fibrillation.fp);
  EXPECT_GE(sinus.sensitivity(), 0.999);
  EXPECT_LE(fibrillation.fp, 16);
}

// The patterns below, as issue 57 names those a detector tuned on DS1 may miss on other
// patients: frequent PVCs at random, in four forms (the generator's own; 0.7 as tall, 1.4 as
// wide and inverted; 1.2 as tall and wide, inverted; half as tall, 1.6 as wide), and bigeminy
// and trigeminy coupled late (0.75-0.85 of the sinus interval: past the T wave, close to the
// next P wave), at PVC amplitudes 1 and 0.5.
const std::vector<Pattern> kFrequentMultiform = {{0.25, 0, 4, 0.55}};
const std::vector<Pattern> kLateMultiform = {{0.0, 2, 4, 0.75}, {0.0, 3, 4, 0.75}};

// Late-coupled bigeminy and trigeminy of one form are found at every rate.
TEST(QrsEctopy, FindsLateCoupledBigeminyAndTrigeminyOfOneForm) {
  const Grid g = run_patterns({{0.0, 2, 1, 0.75}, {0.0, 3, 1, 0.75}}, {1.0, 0.5}, {60.0, 85.0});
  EXPECT_GE(g.worst_se, 0.98) << g.worst;
  EXPECT_GE(g.ventricular.sensitivity(), 0.995);
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// Whatever of the multiform PVCs is missed, nothing else is taken for a beat.
TEST(QrsEctopy, TakesNoFalseBeatAmongMultiformPvcs) {
  for (const auto& patterns : {kFrequentMultiform, kLateMultiform}) {
    const Grid g = run_patterns(patterns, {1.0, 0.5}, {60.0, 110.0});
    print_totals(g);
    EXPECT_GE(g.all.positive_predictivity(), 0.999);
  }
}

// Frequent multiform PVCs, found in the compensatory pause each leaves by the pause search
// (qrs_pause_search.h) where the thresholds turn them away: V Se 0.741 -> 0.901 in the envelopes
// -> 0.971 with the waves -> 0.980 with the record's first regular beats read ahead for the
// pauses before its own -> 0.987 with the forms of the record's premature beats
// (qrs_ectopic_forms.h) -> 0.993 with the first walk's premature beats standing in for those a
// record's start has not shown yet -> 0.997 with as many of its regular beats standing in as a
// pause later in the record has to choose from -> 0.998 (1186 of 1188) with each lead of a form
// weighed by its share of the leads' weights, not by the weight itself, which changes along the
// record. The 2 missed are in the 128 Hz, 110 bpm, amplitude 0.5 record, one lead: one at 10.8 s
// whose form has a cosine of 0.89-0.90 with 4 of the 10 forms known there (2 at 0.9 needed), one
// 1.8 s before its end (docs/notebook/qrs-detector.md). Late-coupled ones:
// FindsLateCoupledMultiformBigeminyAndTrigeminy.
TEST(QrsEctopy, FindsFrequentMultiformPvcs) {
  const Grid g = run_patterns(kFrequentMultiform, {1.0, 0.5}, {70.0, 110.0});
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// PVCs both small and wide (0.4 and 1.8) within the T wave's reach after sinus beats. In the main
// band they stand no taller than the T waves the noise level is made of, in the envelopes no
// taller than the T wave's tail (31 % found); in the slow band's waves half the beats' amplitude
// above the sinus beats' own T wave (qrs_pause_waves.h): 99.4 %, and 99.87 % with the stretch a
// record ends in searched before it is a pause (99.80 %, 3 of 1536 missed, since regular beats
// ahead fill a pause's known beats up to kHistory). 2 missed (250 and 1000 Hz trigeminy) lie in
// pauses that were searched, where the main band's envelope nowhere rises 0.03 of the beats'
// height above its expectation, so the waves are not read; the third (1000 Hz trigeminy, 53.1 s)
// stands 0.68 of the beats' amplitude in the waves, under 3 times what the regular beats leave
// unexplained (0.23).
TEST(QrsEctopy, FindsSmallAndWidePvcsCoupledWithinTheTWave) {
  const Grid g = run_grid({{0.4, 1.8}}, {110.0}, /*onset_seconds=*/20.0);
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.worst_se, 0.95) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// The sinus beats' sensitivity of a grid: every beat found less the PVCs.
double sinus_sensitivity(const Grid& g) {
  const int64_t found = g.all.tp - g.ventricular.tp;
  return double(found) / double(found + g.all.fn - g.ventricular.fn);
}

// PVCs four and five times the generator's own amplitude (5.6 and 7 mV against sinus R waves of
// 1.1 mV) in bigeminy, trigeminy and a third of the beats at random, after 20 s of sinus rhythm:
// beside them the sinus beats stand under a fifth of their height. Once half of the last 8 beats
// are PVCs their median is the PVCs', and the sinus beats fell under the threshold (sinus Se
// 0.9922 over the grid at five times, worst record 0.61, before the threshold read the lower of
// the two middle heights where they differ more than twofold; qrs_decide.cpp).
TEST(QrsEctopy, FindsSinusBeatsBesidePvcsFiveTimesTheirHeight) {
  const std::vector<Pattern> patterns = {{0.0, 2, 1, 0.55}, {0.0, 3, 1, 0.55}, {0.35, 0, 1, 0.55}};
  const Grid g = run_patterns(patterns, {4.0, 5.0}, {60.0, 85.0, 110.0}, /*onset_seconds=*/20.0);
  EXPECT_GE(sinus_sensitivity(g), 0.999);
  EXPECT_GE(g.ventricular.sensitivity(), 0.998);
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// Runs of PVCs: each PVC at random (a fifth of the beats) starts a run of one, two or three
// (couplets and triplets, as in MIT-BIH 200 and 233), each after the one before at the
// first's coupling interval (0.55-0.65 of the sinus interval: at 110 bpm 0.30-0.35 s, inside
// the T wave's reach of the beat before), the sinus beat after on the sinus node's pace. A
// couplet's pause measures two sinus intervals, as the compensatory pause of a single PVC does:
// a search of it that finds one beat has the runs' searches read around that beat for the rest
// (qrs_pause_search.h).
const std::vector<Pattern> kRuns = {{0.2, 0, 1, 0.55, 3}, {0.2, 0, 4, 0.55, 3}};

// Couplets and triplets, found as single PVCs of the same forms are (FindsFrequentMultiformPvcs,
// 0.998), and nothing else taken for a beat (issue 57, item 4). V Se over this grid 0.828 ->
// 0.891 with the gap before a late beat searched for a run's first beat (the thresholds took it
// for the T wave; its second, on time after it, then looks late) -> 0.916 with the gap after a
// premature beat searched near its middle for the run's next beat (qrs_run_search.cpp:
// add_first_of_run, next_of_run) -> 0.931 with it searched first one coupling interval after that
// beat (a triplet's second and third) -> 0.950 with the gap before a beat a pause search found
// searched too (a couplet missed whole) -> 0.963 with a pause left before such a beat searched
// again (a triplet missed whole) -> 0.982 with a run's next beat taken on the run's own form
// closely (kRunSimilar) where the record's premature beats are too few or of other forms -> 0.990
// with the gap before a beat on time (not late) searched for the run's first beat of that beat's
// form closely -> 0.993 with that search also after a beat counted premature (0.79 in its worst
// record: small multiform PVCs at 110 bpm, 128 Hz) -> 0.996 with the forms of the premature beats
// the pause search found standing clear in both envelopes (that record's form the thresholds
// missed: 1.0 there) -> 0.997 with a run's first beat before a second on time also taken of that
// beat's form and the record's premature forms -> 0.9978 with a wave of the form of the beat a
// pause search found taken in the pause before it -> 0.9981 (7 of 3624 missed) with the gap
// after a found premature beat read for the run's next beat before a beat a pause search found
// from 0.85 sinus intervals on (docs/notebook/qrs-detector.md).
TEST(QrsEctopy, FindsPvcsInCoupletsAndTriplets) {
  const Grid g = run_patterns(kRuns, {1.0, 0.5}, {60.0, 110.0});
  print_totals(g);
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// Runs of up to five (non-sustained ventricular tachycardia, as in MIT-BIH 200, 203 and 233):
// each inner beat of a run has a span of two coupling intervals around it, about one sinus
// interval, the span that says bigeminy hid its premature beats; V Se 0.981 -> 0.989 with those
// spans left out of that rule (qrs_sinus_interval.h), where frequent runs had halved the sinus
// interval -> 0.9925 with the gap after every premature beat read for the run's next beat from
// 0.85 sinus intervals on, not 1.05 (a run's beats two apart read about one sinus interval). The
// 0.998 of couplets and triplets is not met here (docs/notebook/qrs-detector.md).
TEST(QrsEctopy, FindsMostPvcsInRunsOfUpToFive) {
  std::vector<Pattern> runs = kRuns;
  for (Pattern& p : runs) p.run_max = 5;
  const Grid g = run_patterns(runs, {1.0, 0.5}, {60.0, 110.0});
  print_totals(g);
  EXPECT_GE(g.ventricular.sensitivity(), 0.99) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// PVCs in atrial fibrillation (as in MIT-BIH 203, 210, 219 and 221): a sixth of the beats, one
// form or four, at AF rates of 80 and 120 bpm, each 0.55-0.65 of the mean AF interval after the
// beat before (0.28-0.33 s at 120 bpm, on that beat's T wave). AF has no regular rhythm, so no
// pause search runs, and what the thresholds turn away stays missed: V Se 0.760, most misses the
// PVCs half as tall at 120 bpm (docs/notebook/qrs-detector.md). A floor, not the target.
TEST(QrsEctopy, FindsMostPvcsInAtrialFibrillation) {
  Grid g;
  for (const double fs : kRates)
    for (const int forms : {1, 4})
      for (const double amplitude : {1.0, 0.5})
        for (const double bpm : {80.0, 120.0})
          for (const bool both : {false, true}) {
            hlm::dsp::SyntheticEcgOptions o;
            o.seconds = 120;
            o.sampling_hz = fs;
            o.seed = uint64_t(fs) * 17 + uint64_t(forms * 100 + bpm);
            o.heart_rate_bpm = bpm;  // for the printed line: the rhythm is AF throughout
            o.af_fraction = 1.0;
            o.af_rate_bpm = bpm;
            o.af_pvc_coupling = 0.55;
            o.pvc_rate = 0.15;
            o.pvc_forms = forms;
            o.pvc_amplitude = amplitude;
            add_record(g, o, both);
          }
  print_totals(g);
  EXPECT_GE(g.ventricular.sensitivity(), 0.74) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// Late-coupled multiform bigeminy and trigeminy: V Se 0.837 -> 0.962 with the pause search ->
// 0.974 -> 0.980 with the look-ahead -> 0.987 with the sinus interval read from the spans around
// premature beats (qrs_sinus_interval.h) -> 0.989 with the threshold's two kinds of beat
// (qrs_decide.cpp) -> 0.993 with only beats followed by a sinus interval read as regular ->
// 0.998 with the spans setting an interval no sinus interval had confirmed, and the walk
// starting again from the interval the look-ahead reached (bigeminy from the first beat made
// the median of the first 8 intervals 0.930 s against a sinus rhythm of 0.706 s) -> 0.9988 with
// a wave in the stretch a record ends in allowed to fall after its peak's window. Of the 6
// missed (4818 of 4824: 3 more missed fail the test), 4 are a record's last PVC, 24 ms before its
// end, its wave cut off. The same patterns in one form:
// FindsLateCoupledBigeminyAndTrigeminyOfOneForm.
TEST(QrsEctopy, FindsLateCoupledMultiformBigeminyAndTrigeminy) {
  const Grid g = run_patterns(kLateMultiform, {1.0, 0.5}, {60.0, 85.0});
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.999);
}

// Not met yet (issue 57, item 4): the same PVCs from the record's first beat on. With no sinus
// interval measured before the run, the doubled interval of the missed PVCs is taken for the
// rhythm, and no gap looks like a pause: 3.1 % found before the pause search, 29 % with it
// (where the thresholds found some, the rest are searched), 31 % since. In trigeminy the first
// intervals alternate one sinus interval and two; starting the walk from the shorter where they
// do finds 98.8 % of its PVCs (39.7 % over the grid), but takes the T waves of a 3:2 AV block,
// which shows the same intervals (TakesNoTWaveForABeatIn3To2AvBlockFromTheFirstBeat:
// docs/notebook/qrs-detector.md, 2026-12-06). Real bigeminy mostly sets in after sinus beats.
// Run it with --gtest_also_run_disabled_tests.
TEST(QrsEctopy, DISABLED_FindsPvcsCoupledWithinTheTWaveFromTheFirstBeat) {
  const Grid g = run_grid({{1.0, 1.8}, {0.4, 1.0}}, {110.0});
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.sensitivity(), 0.998) << g.worst;
}

}  // namespace
