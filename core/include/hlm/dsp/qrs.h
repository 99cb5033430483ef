// QRS detection: R-peak sample indices from one or more ECG leads in mV, at any sampling
// rate, with no per-record tuning. Quality is scored like WFDB's bxb (hlm/dsp/beat_match.h):
// on the 22 MIT-BIH DS1 records, gross Se/+P 99.88/99.81 % with both leads, 99.78/99.78 % with
// the first alone (tests/dsp/test_qrs_mitdb.cpp). Speed per core is in docs/benchmarks.md
// (`hlm bench tokenize`, detect stage).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp {

struct QrsOptions {
  // With several leads: the lead whose R peaks are returned.
  int fiducial_lead = 0;
  // Shortest interval between two beats; a bigger peak within it replaces the beat before.
  double refractory_seconds = 0.20;
  // A peak closer than this to the previous beat, with less than half its slope and less
  // than 0.6 of the recent beat height, is taken for a T wave. A peak below the threshold is
  // taken for an ectopic beat only beyond this (see detect_qrs).
  double t_wave_seconds = 0.36;
  // When no beat came for this many mean RR intervals, the gap is searched again with half
  // the threshold.
  double search_back_rr = 1.66;
};

// R peaks of a single lead of n samples (mV) recorded at sampling_hz, in increasing order.
//
// How: the lead is resampled to 200 Hz and band-passed by moving means (25 ms minus 125 ms,
// linear phase); the 125 ms moving mean of its rectified slope is the envelope, scaled to the
// local QRS level. Local maxima of the envelope are accepted as beats when they clear a
// threshold between the medians of the last 8 beat and noise heights (Hamilton-Tompkins style),
// with a refractory period, T-wave rejection and search-back. The main band shrinks wide or
// small ventricular beats to the height of T waves; a slow band (50 ms minus 250 ms means,
// 250 ms envelope) keeps a wide one about as tall as a QRS, and a peak beyond the T wave's
// reach that is at least half the beats' slow-band height, clearly above the noise and
// followed by a pause is a beat too. Weak peaks that split one normal interval in two (early
// noise, or a P wave just before the QRS) are then dropped, and each pause (after a premature
// beat, only one longer than its compensatory pause) is searched for a beat that stands above
// what the regular beats' own waves leave there, in the envelopes or in the slow band's waves
// themselves (a PVC the thresholds turned away). Each beat's R peak is the largest
// deflection from the local baseline within 80 ms, at the original rate. Thread-safe (work
// buffers are per thread and reused between calls). Throws ConfigError for sampling_hz <= 0.
std::vector<int64_t> detect_qrs(const float* ecg_mv, size_t n, double sampling_hz,
                                const QrsOptions& options = {});

// R peaks found on several simultaneous leads (each of n samples, mV). The leads' envelopes
// are summed with weights from each lead's quality over ~10 s - first how far its peaks stand
// above its background, then, in a second pass, how far its beats stand above its highest
// points between the beats of the first pass - so a lead that goes flat, noisy or full of
// artefacts for a while costs little. Positions refer to options.fiducial_lead.
std::vector<int64_t> detect_qrs(const std::vector<const float*>& leads_mv, size_t n,
                                double sampling_hz, const QrsOptions& options = {});

}  // namespace hlm::dsp
