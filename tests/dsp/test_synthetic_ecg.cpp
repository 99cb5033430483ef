// Synthetic ECG: ground-truth annotations, determinism, PVCs and AF as generated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hlm/dsp/synthetic_ecg.h"

namespace {
hlm::dsp::SyntheticEcgOptions options(uint64_t seed) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = 120;
  o.seed = seed;
  o.pvc_rate = 0.1;
  o.af_fraction = 0.5;
  return o;
}

// Options without noise or baseline wander, so that two records differing in one option can be
// compared sample by sample.
hlm::dsp::SyntheticEcgOptions noise_free(double seconds) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = seconds;
  o.noise_mv = 0;
  o.baseline_mv = 0;
  return o;
}

// Coefficient of variation of successive RR differences over beats inside / outside AF.
double rr_irregularity(const hlm::dsp::SyntheticRhythm& r, bool af) {
  double sum = 0, sum_rr = 0;
  int n = 0;
  for (size_t i = 2; i < r.beats.size(); ++i) {
    const auto &a = r.beats[i - 2], &b = r.beats[i - 1], &c = r.beats[i];
    if (a.in_af != af || b.in_af != af || c.in_af != af) continue;
    if (a.kind != hlm::dsp::SyntheticBeat::kNormal || b.kind != a.kind || c.kind != a.kind)
      continue;
    const double rr1 = b.seconds - a.seconds, rr2 = c.seconds - b.seconds;
    sum += std::fabs(rr2 - rr1);
    sum_rr += rr2;
    ++n;
  }
  return n ? sum / sum_rr : 0.0;
}
}  // namespace

TEST(SyntheticEcg, AnnotatesEveryGeneratedBeatAtItsRPeak) {
  const auto o = options(1);
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  const auto rec = hlm::dsp::synthesize_ecg("syn000", o);
  std::vector<hlm::Annotation> beats;
  for (const auto& a : rec.annotations)
    if (hlm::is_beat_code(a.code)) beats.push_back(a);
  ASSERT_EQ(beats.size(), rhythm.beats.size());
  int pvcs = 0;
  for (size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(beats[i].sample, std::llround(rhythm.beats[i].seconds * o.sampling_hz));
    EXPECT_EQ(beats[i].code, uint8_t(rhythm.beats[i].kind));
    pvcs += beats[i].code == 5;
  }
  EXPECT_GT(pvcs, 0);
  // The annotated sample is the R peak: the largest |deflection| within 50 ms on lead 0.
  const auto x = rec.physical(0);
  for (size_t i = 1; i + 1 < beats.size(); ++i) {
    if (beats[i].code != 1) continue;
    const int64_t s = beats[i].sample;
    int64_t best = s;
    for (int64_t j = s - 18; j <= s + 18; ++j)
      if (x[j] > x[best]) best = j;
    EXPECT_LE(std::abs(best - s), 3) << "beat at " << s;
  }
}

TEST(SyntheticEcg, WritesDigitalSignalsWithTheirGain) {
  const auto rec = hlm::dsp::synthesize_ecg("syn001", options(2));
  ASSERT_EQ(rec.signals.size(), 2u);
  EXPECT_EQ(rec.frames, 120 * 360);
  EXPECT_EQ(rec.digital[0].size(), size_t(rec.frames));
  EXPECT_EQ(rec.signals[0].gain, 200.0);
  EXPECT_EQ(rec.signals[0].format, 16);
  EXPECT_EQ(rec.name, "syn001");
}

TEST(SyntheticEcg, IsDeterministicForAFixedSeed) {
  const auto a = hlm::dsp::synthesize_ecg("a", options(7));
  const auto b = hlm::dsp::synthesize_ecg("a", options(7));
  const auto c = hlm::dsp::synthesize_ecg("a", options(8));
  EXPECT_EQ(a.digital, b.digital);
  ASSERT_EQ(a.annotations.size(), b.annotations.size());
  for (size_t i = 0; i < a.annotations.size(); ++i)
    EXPECT_EQ(a.annotations[i].sample, b.annotations[i].sample);
  EXPECT_NE(a.digital, c.digital);
}

TEST(SyntheticEcg, MarksAfEpisodesWithRhythmAnnotations) {
  const auto rec = hlm::dsp::synthesize_ecg("af", options(3));
  std::vector<std::string> changes;
  for (const auto& a : rec.annotations)
    if (a.code == 28) changes.push_back(a.aux);
  ASSERT_GE(changes.size(), 2u);
  for (size_t i = 1; i < changes.size(); ++i) EXPECT_NE(changes[i], changes[i - 1]);
  EXPECT_NE(std::find(changes.begin(), changes.end(), "(AFIB"), changes.end());
  EXPECT_EQ(rec.annotations.front().code, 28);
  EXPECT_EQ(rec.annotations.front().sample, 0);
}

TEST(SyntheticEcg, AfSegmentsHaveMoreIrregularRr) {
  for (uint64_t seed : {1, 2, 3}) {
    const auto r = hlm::dsp::synthesize_rhythm(options(seed));
    const double af = rr_irregularity(r, true), sinus = rr_irregularity(r, false);
    EXPECT_GT(af, 3.0 * sinus) << "seed " << seed;
  }
}

TEST(SyntheticEcg, GeneratesAtAnySamplingRateAndLength) {
  auto o = options(4);
  o.sampling_hz = 128;
  o.seconds = 10.5;
  const auto rec = hlm::dsp::synthesize_ecg("x", o);
  EXPECT_EQ(rec.frames, std::llround(10.5 * 128));
  EXPECT_EQ(rec.sampling_hz, 128.0);
}

TEST(SyntheticEcg, RejectsOutOfRangeOptions) {
  auto o = options(5);
  o.af_fraction = 1.5;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// pvc_every: bigeminy alternates sinus and ventricular beats, trigeminy puts a PVC after
// every two sinus beats; each PVC is premature and followed by a pause.
TEST(SyntheticEcg, MakesBigeminyAndTrigeminyPatterns) {
  for (const int every : {2, 3}) {
    hlm::dsp::SyntheticEcgOptions o;
    o.seconds = 60;
    o.pvc_every = every;
    const auto rhythm = hlm::dsp::synthesize_rhythm(o);
    ASSERT_GT(rhythm.beats.size(), 40u);
    int normals = 0;
    for (size_t k = 0; k < rhythm.beats.size(); ++k) {
      const auto& b = rhythm.beats[k];
      if (b.kind == hlm::dsp::SyntheticBeat::kNormal) {
        ++normals;
        continue;
      }
      EXPECT_EQ(normals, every - 1) << "beat " << k;
      normals = 0;
      if (k + 1 < rhythm.beats.size()) {
        const double coupling = b.seconds - rhythm.beats[k - 1].seconds;
        const double pause = rhythm.beats[k + 1].seconds - b.seconds;
        EXPECT_GT(pause, coupling) << "beat " << k;
      }
    }
  }
}

// pvc_amplitude and pvc_width shape the PVCs only: sinus beats are unchanged.
TEST(SyntheticEcg, ScalesThePvcsAmplitudeAndWidth) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(30);
  o.pvc_every = 2;
  const auto tall = hlm::dsp::synthesize_ecg("x", o);
  o.pvc_amplitude = 0.5;
  const auto small = hlm::dsp::synthesize_ecg("x", o);
  const auto x = tall.physical(0), y = small.physical(0);
  for (const auto& a : tall.annotations) {
    if (a.code != 1 && a.code != 5) continue;
    const float ratio = y[size_t(a.sample)] / x[size_t(a.sample)];
    EXPECT_NEAR(ratio, a.code == 5 ? 0.5f : 1.0f, a.code == 5 ? 0.1f : 0.02f) << a.sample;
  }
  o.pvc_width = 0.2;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
  o.pvc_width = 1.0;
  o.pvc_every = 1;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// pvc_coupling: each PVC falls between that share of the sinus interval and 0.1 more, measured
// on the compensatory pause (the sinus beats around a PVC are two sinus intervals apart).
TEST(SyntheticEcg, CouplesThePvcsAtTheGivenShareOfTheSinusInterval) {
  for (const double coupling : {0.55, 0.75}) {
    hlm::dsp::SyntheticEcgOptions o;
    o.seconds = 60;
    o.pvc_every = 2;
    o.pvc_coupling = coupling;
    const auto rhythm = hlm::dsp::synthesize_rhythm(o);
    int pvcs = 0;
    for (size_t k = 1; k + 1 < rhythm.beats.size(); ++k) {
      const auto& b = rhythm.beats[k];
      if (b.kind != hlm::dsp::SyntheticBeat::kPvc) continue;
      const double sinus = (rhythm.beats[k + 1].seconds - rhythm.beats[k - 1].seconds) / 2.0;
      const double share = (b.seconds - rhythm.beats[k - 1].seconds) / sinus;
      EXPECT_GE(share, coupling - 1e-9) << "beat " << k;
      EXPECT_LE(share, coupling + 0.1 + 1e-9) << "beat " << k;
      ++pvcs;
    }
    EXPECT_GT(pvcs, 20);
  }
  hlm::dsp::SyntheticEcgOptions o;
  o.pvc_coupling = 0.95;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// af_pvc_coupling: in AF each PVC falls between that share of the mean AF interval and 0.1 more
// after the beat before it, whatever the next AF interval drawn; 0 keeps a share of that draw.
TEST(SyntheticEcg, CouplesThePvcsInAtrialFibrillationToTheMeanInterval) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = 120;
  o.af_fraction = 1.0;
  o.af_rate_bpm = 120.0;
  o.pvc_rate = 0.2;
  o.af_pvc_coupling = 0.55;
  const double mean = 60.0 / o.af_rate_bpm;
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  int pvcs = 0;
  for (size_t k = 1; k < rhythm.beats.size(); ++k) {
    if (rhythm.beats[k].kind != hlm::dsp::SyntheticBeat::kPvc) continue;
    const double coupling = rhythm.beats[k].seconds - rhythm.beats[k - 1].seconds;
    EXPECT_GE(coupling, 0.55 * mean - 1e-9) << "beat " << k;
    EXPECT_LE(coupling, 0.65 * mean + 1e-9) << "beat " << k;
    ++pvcs;
  }
  EXPECT_GT(pvcs, 20);
  o.af_pvc_coupling = 0.0;  // the older rule: a share of the next interval drawn (0.28 s or more)
  double shortest = 1.0;
  const auto drawn = hlm::dsp::synthesize_rhythm(o);
  for (size_t k = 1; k < drawn.beats.size(); ++k)
    if (drawn.beats[k].kind == hlm::dsp::SyntheticBeat::kPvc)
      shortest = std::min(shortest, drawn.beats[k].seconds - drawn.beats[k - 1].seconds);
  EXPECT_LT(shortest, 0.55 * mean);
  o.af_pvc_coupling = 0.2;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// pvc_forms: the PVCs take every form, the inverted ones with their R wave below the baseline.
TEST(SyntheticEcg, MakesMultiformPvcs) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(120);
  o.pvc_every = 2;
  o.pvc_forms = 4;
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  int count[4] = {};
  for (const auto& b : rhythm.beats)
    if (b.kind == hlm::dsp::SyntheticBeat::kPvc) ++count[b.form];
  for (int f = 0; f < 4; ++f) EXPECT_GT(count[f], 5) << "form " << f;
  const auto multi = hlm::dsp::synthesize_ecg("x", o);
  const auto x = multi.physical(0);
  int inverted = 0, upright = 0;
  for (const auto& a : multi.annotations)
    if (a.code == 5) ++(x[size_t(a.sample)] < 0 ? inverted : upright);
  EXPECT_GT(inverted, 10);
  EXPECT_GT(upright, 10);
  o.pvc_forms = 5;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// pvc_onset_seconds: sinus rhythm alone before it, the pattern from it on.
TEST(SyntheticEcg, StartsThePvcPatternAtItsOnset) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = 60;
  o.pvc_every = 2;
  o.pvc_onset_seconds = 20;
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  int before = 0, after = 0;
  for (const auto& b : rhythm.beats)
    if (b.kind == hlm::dsp::SyntheticBeat::kPvc) ++(b.seconds < 20 ? before : after);
  EXPECT_EQ(before, 0);
  EXPECT_GT(after, 20);
  o.pvc_onset_seconds = -1;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// av_block_onset_seconds: from it on every other sinus impulse is blocked. The ventricular
// interval doubles, no beat is annotated at a blocked impulse, and its P wave is drawn alone.
TEST(SyntheticEcg, Makes2To1AvBlockFromItsOnset) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(60);
  o.heart_rate_bpm = 100;
  o.rr_std_seconds = 0;
  o.leads = 1;
  o.av_block_onset_seconds = 30;
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  ASSERT_GT(rhythm.blocked_p_waves.size(), 20u);
  for (size_t k = 1; k < rhythm.beats.size(); ++k) {
    const double rr = rhythm.beats[k].seconds - rhythm.beats[k - 1].seconds;
    EXPECT_NEAR(rr, rhythm.beats[k - 1].seconds < 30 ? 0.6 : 1.2, 1e-9) << "beat " << k;
  }
  for (const double t : rhythm.blocked_p_waves) EXPECT_GE(t, 30.0);
  // A blocked impulse's P wave (0.20 s before where its R wave would be) is there.
  const auto rec = hlm::dsp::synthesize_ecg("x", o);
  const auto x = rec.physical(0);
  const double t = rhythm.blocked_p_waves[5] - 0.20;
  EXPECT_GT(x[size_t(std::llround(t * o.sampling_hz))], 0.1f);
  for (const auto& a : rec.annotations)
    EXPECT_GT(std::fabs(double(a.sample) / o.sampling_hz - rhythm.blocked_p_waves[5]), 0.3);
}

// av_block_every 3: of every three sinus impulses the third is blocked (3:2 block), so the
// intervals alternate between one sinus interval and two: 0.6 s, then 1.2 s.
TEST(SyntheticEcg, Makes3To2AvBlock) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(60);
  o.heart_rate_bpm = 100;
  o.rr_std_seconds = 0;
  o.leads = 1;
  o.av_block_onset_seconds = 0;
  o.av_block_every = 3;
  const auto rhythm = hlm::dsp::synthesize_rhythm(o);
  ASSERT_GT(rhythm.beats.size(), 30u);
  EXPECT_NEAR(double(rhythm.blocked_p_waves.size()), 0.5 * double(rhythm.beats.size()), 1.0);
  for (size_t k = 2; k < rhythm.beats.size(); ++k) {
    const double a = rhythm.beats[k - 1].seconds - rhythm.beats[k - 2].seconds;
    const double b = rhythm.beats[k].seconds - rhythm.beats[k - 1].seconds;
    EXPECT_NEAR(a + b, 1.8, 1e-9) << "beat " << k;  // one short and one long interval
    EXPECT_NEAR(std::fabs(a - b), 0.6, 1e-9) << "beat " << k;
  }
  o.av_block_every = 1;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// pvc_run_max: each PVC starts a run of one to pvc_run_max PVCs of one form, each after the one
// before at the first's coupling interval; the sinus beat after the run keeps the sinus pace.
TEST(SyntheticEcg, MakesRunsOfPvcsOnTheSinusPace) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(300);
  o.heart_rate_bpm = 100;
  o.rr_std_seconds = 0;
  o.leads = 1;
  o.pvc_rate = 0.2;
  o.pvc_forms = 4;
  o.pvc_run_max = 3;
  const auto beats = hlm::dsp::synthesize_rhythm(o).beats;
  int runs[4] = {0, 0, 0, 0};
  for (size_t k = 1; k < beats.size();) {
    if (beats[k].kind != hlm::dsp::SyntheticBeat::kPvc) {
      ++k;
      continue;
    }
    size_t end = k;  // one past the run
    while (end < beats.size() && beats[end].kind == hlm::dsp::SyntheticBeat::kPvc) ++end;
    ASSERT_LE(end - k, 3u) << "run at " << beats[k].seconds << " s";
    ++runs[end - k];
    const double coupling = beats[k].seconds - beats[k - 1].seconds;
    for (size_t j = k + 1; j < end; ++j) {
      EXPECT_NEAR(beats[j].seconds - beats[j - 1].seconds, coupling, 1e-9);
      EXPECT_EQ(beats[j].form, beats[k].form);
    }
    if (end < beats.size()) {  // on the pace: a whole number of sinus intervals of 0.6 s
      const double gap = (beats[end].seconds - beats[k - 1].seconds) / 0.6;
      EXPECT_NEAR(gap, std::round(gap), 1e-6) << "after the run at " << beats[k].seconds << " s";
      EXPECT_GE(beats[end].seconds - beats[end - 1].seconds, 0.36 - 1e-9);
    }
    k = end;
  }
  EXPECT_GT(runs[1], 5);
  EXPECT_GT(runs[2], 5);
  EXPECT_GT(runs[3], 5);
  o.pvc_run_max = 0;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}

// t_wave_amplitude scales the sinus beats' T waves alone.
TEST(SyntheticEcg, ScalesTheTWaves) {
  hlm::dsp::SyntheticEcgOptions o = noise_free(20);
  o.leads = 1;
  const auto plain = hlm::dsp::synthesize_ecg("x", o);
  o.t_wave_amplitude = 3;
  const auto tall = hlm::dsp::synthesize_ecg("x", o);
  const auto x = plain.physical(0), y = tall.physical(0);
  for (const auto& a : plain.annotations) {
    if (a.code != 1) continue;
    const auto r = size_t(a.sample);
    EXPECT_NEAR(y[r], x[r], 0.02f) << a.sample;  // the R wave as it was
    // The T wave's peak, 0.26 s times sqrt(RR) after the R wave (RR about 0.86 s at 70 bpm).
    const size_t t = r + size_t(0.24 * o.sampling_hz);
    if (t >= x.size()) continue;
    EXPECT_GT(y[t], 1.5f * x[t]) << a.sample;
  }
  o.t_wave_amplitude = -1;
  EXPECT_ANY_THROW(hlm::dsp::synthesize_ecg("x", o));
}
