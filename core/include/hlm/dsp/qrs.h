// QRS detection: R-peak sample indices from one or more ECG leads in mV, at any sampling
// rate, with no per-record tuning. Quality is scored like WFDB's bxb (hlm/dsp/beat_match.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hlm::dsp {

struct QrsOptions {
  // Leads: the lead whose R peaks are returned when several are given.
  int fiducial_lead = 0;
  // Shortest interval between two beats; no QRS can follow another sooner.
  double refractory_seconds = 0.20;
  // Detections closer than this to the previous beat must have a steeper slope than half
  // the previous QRS's, or they are taken for T waves.
  double t_wave_seconds = 0.36;
  // When no beat came for this many mean RR intervals, the gap is searched again with half
  // the threshold.
  double search_back_rr = 1.66;
};

// R peaks of a single lead of n samples (mV) recorded at sampling_hz, in increasing order.
std::vector<int64_t> detect_qrs(const float* ecg_mv, size_t n, double sampling_hz,
                                const QrsOptions& options = {});

// R peaks found on several simultaneous leads (each of n samples, mV): the leads' QRS
// energies are combined, each weighted by how clearly its beats stand out of its noise, so a
// lead that goes noisy or flat for a while costs little. Positions refer to
// options.fiducial_lead.
std::vector<int64_t> detect_qrs(const std::vector<const float*>& leads_mv, size_t n,
                                double sampling_hz, const QrsOptions& options = {});

}  // namespace hlm::dsp
