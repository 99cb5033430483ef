// Synthetic ECG waveforms, f-waves, wander and noise on the beat train of synthetic_rhythm.cpp,
// written out as an hlm::Record with annotations (see hlm/dsp/synthetic_ecg.h).
#include "hlm/dsp/synthetic_ecg.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "dsp/synthetic_random.h"
#include "hlm/errors.h"

namespace hlm::dsp {

namespace {
constexpr double kTwoPi = 6.283185307179586;

// ECGSYN's z-equation, dz/dt = -sum_i a_i dtheta_i omega exp(-dtheta_i^2 / 2 b_i^2), integrates
// to a sum of Gaussians in the phase theta. With the limit cycle's angular speed omega = 2 pi/RR
// held per beat and widths b_i = omega w_i, each wave is a Gaussian in time of width w_i centred
// at the R time plus theta_i / omega. That closed form is evaluated directly (no ODE error),
// and the QRS keeps its width in time whatever the rate, as a real one does.
struct Wave {
  double offset_s, width_s, amp_mv;
  bool follows_rr;  // T waves move and widen with sqrt(RR) (Bazett); P, Q, R, S do not
};
// Per kind and lead: MLII-like then V1-like. Values follow ECGSYN's defaults turned into time.
const std::vector<Wave> kNormal[2] = {{{-0.20, 0.025, 0.15, false},
                                       {-0.030, 0.010, -0.10, false},
                                       {0.0, 0.011, 1.10, false},
                                       {0.030, 0.010, -0.22, false},
                                       {0.26, 0.055, 0.30, true}},
                                      {{-0.20, 0.025, 0.07, false},
                                       {-0.008, 0.010, 0.30, false},
                                       {0.022, 0.014, -0.75, false},
                                       {0.26, 0.060, 0.12, true}}};
const std::vector<Wave> kPvc[2] = {
    {{0.0, 0.026, 1.40, false}, {0.065, 0.030, -0.35, false}, {0.30, 0.075, -0.45, true}},
    {{0.010, 0.028, 1.00, false}, {0.075, 0.028, -0.20, false}, {0.30, 0.070, -0.35, true}}};

// The forms of multiform PVCs (SyntheticEcgOptions::pvc_forms): amplitude, width and polarity
// against the first, the generator's own. Polarity flips the whole complex, T wave included.
struct PvcForm {
  double amplitude, width, sign;
};
constexpr PvcForm kPvcForms[4] = {
    {1.0, 1.0, 1.0}, {0.7, 1.4, -1.0}, {1.2, 1.2, -1.0}, {0.5, 1.6, 1.0}};

void check(bool ok, const std::string& what) {
  if (!ok) throw ConfigError("synthetic ECG: {}", what);
}

void add_gaussian(std::vector<double>& x, double fs, double centre_s, double width_s, double amp) {
  const double c = centre_s * fs, w = width_s * fs;
  const int64_t a = std::max<int64_t>(0, static_cast<int64_t>(std::floor(c - 5 * w)));
  const int64_t b = std::min<int64_t>(static_cast<int64_t>(x.size()) - 1,
                                      static_cast<int64_t>(std::ceil(c + 5 * w)));
  for (int64_t i = a; i <= b; ++i) {
    const double u = (double(i) - c) / w;
    x[i] += amp * std::exp(-0.5 * u * u);
  }
}

Annotation rhythm_annotation(int64_t sample, bool af) {
  Annotation a;
  a.sample = sample;
  a.code = kRhythmChangeCode;
  a.aux = af ? "(AFIB" : "(N";
  return a;
}
}  // namespace

namespace {

void check_options(const SyntheticEcgOptions& o) {
  check(o.seconds > 0 && o.seconds <= 7 * 24 * 3600.0, "seconds must be in (0, 604800]");
  check(o.sampling_hz >= 50 && o.sampling_hz <= 10000, "sampling_hz must be in [50, 10000]");
  check(o.heart_rate_bpm >= 20 && o.heart_rate_bpm <= 200, "heart_rate_bpm must be in [20, 200]");
  check(o.af_rate_bpm >= 40 && o.af_rate_bpm <= 200, "af_rate_bpm must be in [40, 200]");
  check(o.pvc_rate >= 0 && o.pvc_rate <= 0.5, "pvc_rate must be in [0, 0.5]");
  check(o.pvc_every == 0 || (o.pvc_every >= 2 && o.pvc_every <= 100),
        "pvc_every must be 0 (random PVCs) or in [2, 100]");
  check(o.pvc_onset_seconds >= 0, "pvc_onset_seconds must be >= 0");
  check(std::isfinite(o.av_block_onset_seconds), "av_block_onset_seconds must be finite");
  check(o.av_block_every >= 2 && o.av_block_every <= 10, "av_block_every must be in [2, 10]");
  check(o.t_wave_amplitude >= 0 && o.t_wave_amplitude <= 5, "t_wave_amplitude must be in [0, 5]");
  check(o.pvc_amplitude > 0 && o.pvc_amplitude <= 5, "pvc_amplitude must be in (0, 5]");
  check(o.pvc_width >= 0.5 && o.pvc_width <= 3, "pvc_width must be in [0.5, 3]");
  check(o.pvc_forms >= 1 && o.pvc_forms <= 4, "pvc_forms must be in [1, 4]");
  check(o.pvc_coupling >= 0.3 && o.pvc_coupling <= 0.9, "pvc_coupling must be in [0.3, 0.9]");
  check(o.pvc_run_max >= 1 && o.pvc_run_max <= 10, "pvc_run_max must be in [1, 10]");
  check(o.af_fraction >= 0 && o.af_fraction <= 1, "af_fraction must be in [0, 1]");
  check(o.af_pvc_coupling == 0 || (o.af_pvc_coupling >= 0.3 && o.af_pvc_coupling <= 0.9),
        "af_pvc_coupling must be 0 (a share of the next AF interval) or in [0.3, 0.9]");
  check(o.rr_std_seconds >= 0 && o.noise_mv >= 0 && o.baseline_mv >= 0,
        "rr_std_seconds, noise_mv and baseline_mv must be >= 0");
  check(o.gain_adu_per_mv > 0, "gain_adu_per_mv must be > 0");
  check(o.leads == 1 || o.leads == 2, "leads must be 1 or 2");
}

using Leads = std::vector<std::vector<double>>;

// Every beat's waves: per-record lead gain, respiratory modulation of amplitude, a little beat
// jitter; PVCs with their own (wider, taller) waves, AF beats without P waves.
void add_beats(Leads& x, const SyntheticRhythm& rhythm, const SyntheticEcgOptions& o, Random& rng,
               const double lead_gain[2], double resp_phase) {
  const double fs = o.sampling_hz;
  double prev_t = -1.0;
  for (const SyntheticBeatTime& b : rhythm.beats) {
    const double rr = prev_t < 0 ? 60.0 / o.heart_rate_bpm : b.seconds - prev_t;
    prev_t = b.seconds;
    const double stretch = std::sqrt(std::clamp(rr, 0.3, 2.0));
    const double mod = 1.0 + 0.05 * std::sin(kTwoPi * 0.25 * b.seconds + resp_phase);
    const double jitter = 1.0 + 0.03 * rng.normal();
    for (int lead = 0; lead < o.leads; ++lead) {
      const auto& waves = b.kind == SyntheticBeat::kPvc ? kPvc[lead] : kNormal[lead];
      for (size_t w = 0; w < waves.size(); ++w) {
        const Wave& wv = waves[w];
        const bool p_wave = b.kind == SyntheticBeat::kNormal && w == 0;
        if (p_wave && b.in_af) continue;  // AF: no P waves
        const bool pvc = b.kind == SyntheticBeat::kPvc;
        const PvcForm& form = kPvcForms[pvc ? b.form : 0];
        // A wider PVC complex stretches its waves' widths and their offsets from the R wave.
        const double shape = pvc && !wv.follows_rr ? o.pvc_width * form.width : 1.0;
        const double off = (wv.follows_rr ? wv.offset_s * stretch : wv.offset_s) * shape;
        const double width = (wv.follows_rr ? wv.width_s * stretch : wv.width_s) * shape;
        const double scale = pvc             ? o.pvc_amplitude * form.amplitude * form.sign
                             : wv.follows_rr ? o.t_wave_amplitude
                                             : 1.0;
        add_gaussian(x[lead], fs, b.seconds + off, width,
                     wv.amp_mv * scale * lead_gain[lead] * mod * jitter);
      }
    }
  }
  // The P waves of blocked sinus impulses, alone (2:1 AV block).
  for (const double t : rhythm.blocked_p_waves)
    for (int lead = 0; lead < o.leads; ++lead) {
      const Wave& p = kNormal[lead][0];
      add_gaussian(x[lead], fs, t + p.offset_s, p.width_s, p.amp_mv * lead_gain[lead]);
    }
}

// Fibrillatory waves in AF: 5-7 Hz with a wandering frequency, faded in and out over 0.3 s.
void add_fibrillation(Leads& x, const SyntheticRhythm& rhythm, const SyntheticEcgOptions& o,
                      Random& rng) {
  const double fs = o.sampling_hz;
  const size_t n = x[0].size();
  const double f_phase0 = rng.unit() * kTwoPi, f_mod_phase = rng.unit() * kTwoPi;
  for (const auto& ep : rhythm.af_episodes) {
    double phase = f_phase0;
    const size_t a = static_cast<size_t>(ep.first * fs);
    const size_t z = std::min(n, static_cast<size_t>(ep.second * fs));
    for (size_t i = a; i < z; ++i) {
      const double t = double(i) / fs;
      phase += kTwoPi * (6.0 + 1.0 * std::sin(kTwoPi * 0.13 * t + f_mod_phase)) / fs;
      const double fade = std::min({1.0, (t - ep.first) / 0.3, (ep.second - t) / 0.3});
      const double f = std::sin(phase) + 0.35 * std::sin(2.0 * phase + 1.0);
      x[0][i] += 0.05 * fade * f;
      if (o.leads > 1) x[1][i] += 0.09 * fade * f;
    }
  }
}

// Baseline wander (respiration and a slow drift) and white noise.
void add_baseline_and_noise(Leads& x, const SyntheticEcgOptions& o, Random& rng) {
  const double fs = o.sampling_hz;
  const double bw_phase[2] = {rng.unit() * kTwoPi, rng.unit() * kTwoPi};
  for (int lead = 0; lead < o.leads; ++lead)
    for (size_t i = 0; i < x[lead].size(); ++i) {
      const double t = double(i) / fs;
      x[lead][i] += o.baseline_mv * (0.6 * std::sin(kTwoPi * 0.25 * t + bw_phase[0] + lead) +
                                     0.4 * std::sin(kTwoPi * 0.07 * t + bw_phase[1])) +
                    o.noise_mv * rng.normal();
    }
}

// The signals in millivolts as a 16-bit WFDB record (format 16, the options' gain).
Record digitise(const std::string& name, const Leads& x, const SyntheticEcgOptions& o) {
  const size_t n = x[0].size();
  Record rec;
  rec.name = name;
  rec.source = "synthetic ECG (seed " + std::to_string(o.seed) + ")";
  rec.sampling_hz = o.sampling_hz;
  rec.frames = static_cast<int64_t>(n);
  for (int lead = 0; lead < o.leads; ++lead) {
    SignalInfo s;
    s.file_name = name + ".dat";
    s.format = 16;
    s.gain = o.gain_adu_per_mv;
    s.gain_given = true;
    s.adc_resolution = 16;
    s.description = lead == 0 ? "synthetic MLII" : "synthetic V1";
    std::vector<int32_t> d(n);
    for (size_t i = 0; i < n; ++i)
      d[i] = static_cast<int32_t>(
          std::clamp<long long>(std::llround(x[lead][i] * o.gain_adu_per_mv), -32767, 32767));
    s.initial_value = n ? d[0] : 0;
    rec.signals.push_back(s);
    rec.digital.push_back(std::move(d));
  }
  return rec;
}

// The rhythm's annotations (AF on and off) and every beat's, in sample order.
void annotate(Record& rec, const SyntheticRhythm& rhythm, const SyntheticEcgOptions& o) {
  const double fs = o.sampling_hz;
  bool af_now = !rhythm.af_episodes.empty() && rhythm.af_episodes.front().first <= 0.0;
  rec.annotations.push_back(rhythm_annotation(0, af_now));
  for (const auto& ep : rhythm.af_episodes) {
    if (ep.first > 0.0)
      rec.annotations.push_back(rhythm_annotation(std::llround(ep.first * fs), true));
    if (ep.second < o.seconds)
      rec.annotations.push_back(rhythm_annotation(std::llround(ep.second * fs), false));
  }
  for (const SyntheticBeatTime& b : rhythm.beats) {
    Annotation a;
    a.sample = std::llround(b.seconds * fs);
    if (a.sample >= rec.frames) continue;
    a.code = static_cast<uint8_t>(b.kind);
    rec.annotations.push_back(a);
  }
  std::stable_sort(rec.annotations.begin(), rec.annotations.end(),
                   [](const Annotation& a, const Annotation& b) { return a.sample < b.sample; });
  rec.comments.push_back("synthetic ECG: " + std::to_string(rhythm.beats.size()) + " beats, " +
                         std::to_string(rhythm.af_episodes.size()) + " AF episode(s)");
}

}  // namespace

Record synthesize_ecg(const std::string& name, const SyntheticEcgOptions& o) {
  check_options(o);
  const SyntheticRhythm rhythm = synthesize_rhythm(o);
  Random rng(o.seed ^ 0x5eed0002ULL);
  const size_t n = static_cast<size_t>(std::llround(o.seconds * o.sampling_hz));
  Leads x(o.leads, std::vector<double>(n, 0.0));
  const double resp_phase = rng.unit() * kTwoPi;
  const double lead_gain[2] = {rng.uniform(0.8, 1.25), rng.uniform(0.8, 1.25)};
  add_beats(x, rhythm, o, rng, lead_gain, resp_phase);
  add_fibrillation(x, rhythm, o, rng);
  add_baseline_and_noise(x, o, rng);
  Record rec = digitise(name, x, o);
  annotate(rec, rhythm, o);
  return rec;
}

}  // namespace hlm::dsp
