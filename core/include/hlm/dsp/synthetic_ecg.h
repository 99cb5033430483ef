// Synthetic ECG with ground truth: the ECGSYN model of McSharry et al. (IEEE TBME 50:289, 2003)
// - Gaussian P, Q, R, S and T waves placed on a limit cycle whose angular speed follows an RR
// tachogram - extended with premature ventricular beats and atrial fibrillation. Seeded and
// deterministic, at any length and sampling rate.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/ecg.h"

namespace hlm::dsp {

struct SyntheticEcgOptions {
  double seconds = 300.0;
  double sampling_hz = 360.0;
  uint64_t seed = 0;
  double heart_rate_bpm = 70.0;  // mean sinus rate
  double rr_std_seconds = 0.04;  // sinus RR variability (LF 0.1 Hz + HF 0.25 Hz + jitter)
  double pvc_rate = 0.0;         // probability that a beat is a premature ventricular one
  // A fixed pattern instead of random PVCs: every pvc_every-th beat is a PVC (2 bigeminy,
  // 3 trigeminy, 0 random at pvc_rate).
  int pvc_every = 0;
  // PVCs (pattern or random) only from this time on: sinus rhythm alone before it, as real
  // bigeminy usually sets in after sinus beats (0: from the first beat).
  double pvc_onset_seconds = 0.0;
  // From this time on (in sinus rhythm), sinus P waves are not conducted: the last of every
  // av_block_every impulses (2: 2:1 AV block, the ventricular rate halved with each T wave left
  // alone in a long interval; 3: 3:2 block, two beats and then such an interval). Below 0: never.
  double av_block_onset_seconds = -1.0;
  int av_block_every = 2;
  double t_wave_amplitude = 1.0;  // scale of the sinus beats' T waves (tall T waves above 1)
  double pvc_amplitude = 1.0;     // scale of the PVC waves (below 1: smaller than sinus beats)
  double pvc_width = 1.0;         // scale of the PVC complex's duration (above 1: wider)
  // PVC morphologies, 1 to 4: each PVC takes one of them at random (multiform ectopy). The
  // first is the generator's own; the others are smaller or taller, wider, and of either
  // polarity (synthetic_ecg.cpp's kPvcForms), on top of pvc_amplitude and pvc_width.
  int pvc_forms = 1;
  // The earliest PVC coupling as a share of the sinus RR; each PVC falls within 0.1 of the RR
  // after it (0.55: within or just past the T wave at fast rates; 0.75: late-coupled).
  double pvc_coupling = 0.55;
  // Each PVC (pattern or random) starts a run of 1 to pvc_run_max PVCs, drawn evenly: couplets
  // and triplets at 3, each after the one before at the first one's coupling interval.
  int pvc_run_max = 1;
  double af_fraction = 0.0;        // share of the record's time in atrial fibrillation
  double af_rate_bpm = 100.0;      // mean ventricular rate in AF
  double noise_mv = 0.01;          // white measurement noise, standard deviation
  double baseline_mv = 0.1;        // baseline wander amplitude (respiration + drift)
  double gain_adu_per_mv = 200.0;  // digital units per mV (format 16 semantics)
  int leads = 2;                   // 1 or 2: an MLII-like lead and a V1-like lead
  // In AF, a PVC's coupling as a share of the mean AF interval (and 0.1 more at most), as a
  // ventricular focus fires a fixed time after the beat before it; 0 keeps the older rule, a
  // share of the next AF interval drawn (down to 0.15 s after the beat at fast AF rates).
  double af_pvc_coupling = 0.0;
};

// Kinds of synthetic beat, with the MIT annotation codes they are written as.
enum class SyntheticBeat : uint8_t { kNormal = 1, kPvc = 5 };

// One generated beat: R-peak time and kind, and whether it falls in AF.
struct SyntheticBeatTime {
  double seconds = 0.0;
  SyntheticBeat kind = SyntheticBeat::kNormal;
  bool in_af = false;
  int form = 0;  // a PVC's morphology, below SyntheticEcgOptions::pvc_forms
};

// The beat train alone (no waveform): RR tachogram, PVC placement and AF episodes.
struct SyntheticRhythm {
  std::vector<SyntheticBeatTime> beats;
  std::vector<std::pair<double, double>> af_episodes;  // [start, end) in seconds
  std::vector<double> blocked_p_waves;  // sinus impulses not conducted: a P wave, no beat
};
SyntheticRhythm synthesize_rhythm(const SyntheticEcgOptions& options);

// A full record named `name`: digital int32 samples (kInvalidSample never occurs), one
// SignalInfo per lead (format 16, the given gain, units mV), beat annotations (code 1 N,
// 5 V) at each R peak and rhythm annotations (code 28, aux "(N" or "(AFIB") at sample 0 and
// at every change, all sorted by sample. Throws ConfigError on out-of-range options.
Record synthesize_ecg(const std::string& name, const SyntheticEcgOptions& options);

}  // namespace hlm::dsp
