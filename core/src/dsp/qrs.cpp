// QRS detector (see hlm/dsp/qrs.h): per-lead envelopes (qrs_envelope.h) fused by quality
// (qrs_fusion.h), candidate peaks accepted by adaptive thresholds (qrs_decide.h), and each
// beat's R peak located on the fiducial lead at the native rate.
#include "hlm/dsp/qrs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "dsp/qrs_decide.h"
#include "dsp/qrs_fusion.h"
#include "dsp/qrs_pause_search.h"
#include "hlm/errors.h"

namespace hlm::dsp {

namespace {
using qrs::Candidate;
using qrs::kRateHz;

// R peak near a detection: the sample within 80 ms farthest from the lead's 120 ms moving mean
// (a local baseline), so the largest deflection wins whatever its sign.
int64_t locate_r_peak(const float* x, int64_t n, double fs, int64_t centre) {
  const int64_t search = std::max<int64_t>(1, std::llround(0.08 * fs));
  const int64_t h = std::max<int64_t>(1, std::llround(0.06 * fs));
  const int64_t lo = std::max<int64_t>(0, centre - search), hi = std::min(n - 1, centre + search);
  if (lo > hi) return std::clamp<int64_t>(centre, 0, n - 1);
  // Running sum over [i - h, i + h], clipped to the record.
  double sum = 0.0;
  int64_t a = std::max<int64_t>(0, lo - h), z = std::min(n - 1, lo + h);
  for (int64_t k = a; k <= z; ++k) sum += x[k];
  int64_t best = lo;
  double best_v = -1.0;
  for (int64_t i = lo; i <= hi; ++i) {
    if (i > lo) {
      if (i + h <= n - 1) sum += x[i + h], ++z;
      if (i - h - 1 >= 0) sum -= x[i - h - 1], ++a;
    }
    const double v = std::fabs(x[i] - sum / double(z - a + 1));
    if (v > best_v) best_v = v, best = i;
  }
  return best;
}
}  // namespace

std::vector<int64_t> detect_qrs(const float* ecg_mv, size_t n, double sampling_hz,
                                const QrsOptions& options) {
  return detect_qrs(std::vector<const float*>{ecg_mv}, n, sampling_hz, options);
}

std::vector<int64_t> detect_qrs(const std::vector<const float*>& leads_mv, size_t n,
                                double sampling_hz, const QrsOptions& options) {
  if (!(sampling_hz > 0.0))
    throw ConfigError("detect_qrs: sampling_hz={:f} must be > 0", sampling_hz);
  if (leads_mv.empty() || options.fiducial_lead < 0 ||
      options.fiducial_lead >= static_cast<int>(leads_mv.size()))
    throw ConfigError("detect_qrs: fiducial_lead={} but {} lead(s) given", options.fiducial_lead,
                      leads_mv.size());
  if (n < 2) return {};
  // Big arrays live in a per-thread workspace, reused from record to record.
  struct Workspace {
    std::vector<qrs::LeadEnvelope> env, slow;
    qrs::Fused fused;
  };
  thread_local Workspace ws;
  const size_t leads = leads_mv.size();
  ws.env.resize(leads);
  ws.slow.resize(leads);
  std::vector<std::vector<float>> level(leads), slow_level(leads), weight(leads);
  for (size_t k = 0; k < leads; ++k) {
    qrs::lead_envelope(leads_mv[k], n, sampling_hz, ws.env[k], &ws.slow[k]);
    level[k] = qrs::qrs_level(ws.env[k]);
    slow_level[k] = qrs::qrs_level(ws.slow[k]);
    weight[k] = leads > 1 ? qrs::peak_weight(ws.env[k], level[k])
                          : std::vector<float>(level[k].size(), 1.0f);
  }
  const int64_t separation = std::llround(0.10 * kRateHz);
  auto candidates = [&] {  // called once with one lead: fuse_in_place leaves ws.env[0] spent
    if (leads == 1)
      qrs::fuse_in_place(ws.env[0], level[0], ws.fused);
    else
      qrs::fuse(ws.env, level, weight, ws.fused);
    std::vector<Candidate> c = qrs::find_candidates(ws.fused, separation);
    qrs::add_slow_heights(ws.slow, slow_level, weight, c);
    return c;
  };
  std::vector<Candidate> beats = qrs::decide(candidates(), options);
  // With several leads, a second pass weighs each lead by how well it shows the beats found.
  if (leads > 1) {
    for (size_t k = 0; k < leads; ++k) weight[k] = qrs::beat_weight(ws.env[k], level[k], beats);
    beats = qrs::decide(candidates(), options);
  }
  thread_local std::vector<float> slow_fused;
  qrs::fuse_slow(ws.slow, slow_level, weight, ws.fused.energy.size(), slow_fused);
  beats = qrs::find_beats_in_pauses(beats, {ws.fused.energy, slow_fused, ws.slow, weight});

  // R peaks at the native rate on the fiducial lead; a beat that lands within half a
  // refractory period of the previous one after the move is the same beat.
  const float* fid = leads_mv[options.fiducial_lead];
  const int64_t half_refractory = std::llround(0.5 * options.refractory_seconds * sampling_hz);
  std::vector<int64_t> out;
  out.reserve(beats.size());
  for (const Candidate& c : beats) {
    const int64_t centre = std::llround(double(c.i) * sampling_hz / kRateHz);
    const int64_t r = locate_r_peak(fid, static_cast<int64_t>(n), sampling_hz, centre);
    if (!out.empty() && r - out.back() < half_refractory) continue;
    out.push_back(r);
  }
  for (auto* envelopes : {&ws.env, &ws.slow})
    for (qrs::LeadEnvelope& e : *envelopes) {
      qrs::release_if_large(e.slope);
      qrs::release_if_large(e.energy);
      qrs::release_if_large(e.band);
    }
  qrs::release_if_large(ws.fused.slope);
  qrs::release_if_large(ws.fused.energy);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hlm::dsp
