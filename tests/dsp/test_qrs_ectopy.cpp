// QRS detection through runs of ventricular ectopy: bigeminy and trigeminy with PVCs as tall
// as sinus beats, smaller, wider, or both, at sampling rates from 128 to 1000 Hz and at slow
// and fast sinus rates. Every PVC of a pattern is premature and followed by a pause: the case
// where a detector that learns the beat level and RR from the sinus beats can reject the
// ectopic ones wholesale.
#include <gtest/gtest.h>

#include <cstdio>
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

Grid run_grid(const std::vector<double>& amplitudes, const std::vector<double>& widths,
              const std::vector<double>& sinus_bpm = {60.0, 110.0}) {
  Grid g;
  for (const double fs : {128.0, 250.0, 360.0, 500.0, 1000.0})
    for (const int every : {2, 3})
      for (const double bpm : sinus_bpm)
        for (const double amplitude : amplitudes)
          for (const double width : widths)
            for (const bool both : {false, true}) {
              hlm::dsp::SyntheticEcgOptions o;
              o.seconds = 120;
              o.sampling_hz = fs;
              o.seed = uint64_t(fs) * 7 + uint64_t(every * 100 + bpm);
              o.heart_rate_bpm = bpm;
              o.pvc_every = every;
              o.pvc_amplitude = amplitude;
              o.pvc_width = width;
              const Scores s = detect(o, both);
              g.all += s.all;
              g.ventricular += s.ventricular;
              char line[200];
              std::snprintf(line, sizeof(line),
                            "%4.0f Hz every %d %3.0f bpm amp %.1f width %.1f %s: V Se %.4f "
                            "(%lld of %lld), all Se %.4f +P %.4f",
                            fs, every, bpm, amplitude, width, both ? "2 leads" : "1 lead",
                            s.ventricular.sensitivity(), (long long)s.ventricular.tp,
                            (long long)(s.ventricular.tp + s.ventricular.fn), s.all.sensitivity(),
                            s.all.positive_predictivity());
              std::printf("%s\n", line);
              if (s.ventricular.sensitivity() < g.worst_se)
                g.worst_se = s.ventricular.sensitivity(), g.worst = line;
            }
  std::printf("worst: %s\n", g.worst.c_str());
  return g;
}

// PVCs of the generator's own shape (taller than the sinus beats, about as narrow): found at
// every sampling rate, pattern and sinus rate.
TEST(QrsEctopy, FindsTheTypicalPvcsOfBigeminyAndTrigeminyAtAnyRate) {
  const Grid g = run_grid({1.0}, {1.0});
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
  const Grid g = run_grid({1.0, 0.4}, {1.0, 1.8}, {60.0, 85.0});
  EXPECT_GE(g.worst_se, 0.9) << g.worst;
  EXPECT_GE(g.ventricular.sensitivity(), 0.99);
  EXPECT_GE(g.all.sensitivity(), 0.995);
  EXPECT_GE(g.all.positive_predictivity(), 0.998);
  std::printf("V Se %.4f, all Se %.4f +P %.4f\n", g.ventricular.sensitivity(), g.all.sensitivity(),
              g.all.positive_predictivity());
}

// Not met yet (issue 14, item 0): PVCs smaller (0.4), wider (1.8) or both, coupled within the
// T wave's reach (110 bpm: 0.30-0.35 s after the sinus beat). The T-wave rule takes them for
// the sinus beat's T wave: in the main band they are barely taller than one (0.13-0.35
// against 0.1), and the ectopic path waits until the T wave's reach has passed. Reading the
// slow band there too (a peak 25 % taller than the beat before it is not its T wave) found the
// wide ones, but took broad T waves that stand taller than a narrow QRS for beats: Challenge
// 2017 record A04608, 168 beats for 91; 1388 more beats in the Challenge's normal-rhythm
// records. Once a few are turned away as T waves, their heights fill the noise estimate (from
// 0.02 to 0.33 of the beat level in one such record) and lock out the PVCs coupled past the
// reach as well. Keeping candidates that are tall in the slow band and followed by a pause out
// of the noise estimate found a fifth of the missed PVCs at 110 bpm, but added 820 beats to 330
// Challenge 2017 records, making the RR of most of them less regular (T waves), and 242 false
// beats to nstdb. Run it with --gtest_also_run_disabled_tests.
TEST(QrsEctopy, DISABLED_FindsSmallOrWidePvcsOfBigeminyAndTrigeminy) {
  const Grid g = run_grid({1.0, 0.4}, {1.0, 1.8});
  EXPECT_GE(g.ventricular.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.sensitivity(), 0.998) << g.worst;
  EXPECT_GE(g.all.positive_predictivity(), 0.998) << g.worst;
}

}  // namespace
