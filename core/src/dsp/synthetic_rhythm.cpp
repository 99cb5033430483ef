// The beat train of the synthetic ECG: sinus RR with LF/HF variability, PVCs with a
// compensatory pause, AF episodes with irregular RR (see hlm/dsp/synthetic_ecg.h).
#include <algorithm>
#include <cmath>
#include <random>

#include "dsp/synthetic_random.h"
#include "hlm/dsp/synthetic_ecg.h"

namespace hlm::dsp {

namespace {
constexpr double kTwoPi = 6.283185307179586;

// AF episodes covering af_fraction of the record: about one per minute of AF, separated by
// random stretches of sinus rhythm.
std::vector<std::pair<double, double>> place_episodes(double seconds, double fraction,
                                                      Random& rng) {
  std::vector<std::pair<double, double>> out;
  if (fraction <= 0.0) return out;
  if (fraction >= 1.0) return {{0.0, seconds}};
  const double af = fraction * seconds;
  const int episodes = std::max(1, static_cast<int>(std::lround(af / 60.0)));
  std::vector<double> cuts(episodes);
  for (double& c : cuts) c = rng.unit();
  std::sort(cuts.begin(), cuts.end());
  const double gap_total = seconds - af, length = af / episodes;
  double prev_cut = 0.0, t = 0.0;
  for (int e = 0; e < episodes; ++e) {
    t += (cuts[e] - prev_cut) * gap_total;
    prev_cut = cuts[e];
    out.emplace_back(t, t + length);
    t += length;
  }
  return out;
}
}  // namespace

SyntheticRhythm synthesize_rhythm(const SyntheticEcgOptions& o) {
  Random rng(o.seed ^ 0x5eed0001ULL);
  SyntheticRhythm r;
  r.af_episodes = place_episodes(o.seconds, o.af_fraction, rng);
  auto in_af = [&](double t) {
    for (const auto& e : r.af_episodes)
      if (t >= e.first && t < e.second) return true;
    return false;
  };
  // Sinus RR: mean plus a Mayer-wave (0.1 Hz) and a respiratory (0.25 Hz) oscillation and a
  // little white jitter, which gives ECGSYN's bimodal RR spectrum.
  const double rr_mean = 60.0 / o.heart_rate_bpm;
  const double lf_phase = rng.unit() * kTwoPi, hf_phase = rng.unit() * kTwoPi;
  const double lf = o.rr_std_seconds * 1.0, hf = o.rr_std_seconds * 0.8,
               jitter = o.rr_std_seconds * 0.3;
  auto sinus_rr = [&](double t) {
    const double v = rr_mean + lf * std::sin(kTwoPi * 0.1 * t + lf_phase) +
                     hf * std::sin(kTwoPi * 0.25 * t + hf_phase) + jitter * rng.normal();
    return std::max(0.3, v);
  };
  // AF: RR independent from beat to beat, log-normal around the AF rate (coefficient of
  // variation about 0.25), never shorter than 0.28 s.
  const double af_rr = 60.0 / o.af_rate_bpm;
  auto af_rr_draw = [&] { return std::max(0.28, af_rr * std::exp(0.25 * rng.normal() - 0.03)); };

  double t = 0.2 + rng.unit() * rr_mean;
  bool last_pvc = true;  // no PVC as the very first beat
  int normals = 0;       // sinus beats since the last PVC
  int impulses = 0;      // AV block: sinus impulses since its onset; the last of each
                         // av_block_every is blocked
  while (t < o.seconds) {
    const bool af = in_af(t);
    if (!af && o.av_block_onset_seconds >= 0.0 && t >= o.av_block_onset_seconds) {
      if (++impulses % o.av_block_every == 0) {  // this impulse is blocked
        r.blocked_p_waves.push_back(t);
        t += sinus_rr(t);
        continue;
      }
    }
    r.beats.push_back({t, SyntheticBeat::kNormal, af});
    ++normals;
    const double rr = af ? af_rr_draw() : sinus_rr(t);
    const bool pvc_next =
        t >= o.pvc_onset_seconds &&
        (o.pvc_every >= 2 ? normals >= o.pvc_every - 1 : !last_pvc && rng.unit() < o.pvc_rate);
    if (pvc_next) {
      // Premature ventricular beat: coupled at pvc_coupling to 0.1 more of the RR (in AF with
      // af_pvc_coupling, of the mean AF interval); in sinus rhythm the next sinus beat keeps
      // its timing (full compensatory pause).
      const bool mean_coupled = af && o.af_pvc_coupling > 0.0;
      const double share = mean_coupled ? o.af_pvc_coupling : o.pvc_coupling;
      const double v = t + (mean_coupled ? af_rr : rr) * (share + 0.1 * rng.unit());
      if (v >= o.seconds) break;
      // A single form draws nothing, so records made before pvc_forms came out the same.
      const int form =
          o.pvc_forms > 1 ? std::min(int(rng.unit() * o.pvc_forms), o.pvc_forms - 1) : 0;
      r.beats.push_back({v, SyntheticBeat::kPvc, in_af(v), form});
      // A run of PVCs (a couplet, a triplet, ...) of the same form, each after the one before
      // at the first one's coupling interval, in sinus rhythm; the sinus beat after it comes
      // on the sinus node's pace, at the first of its beats 0.6 RR or more after the last
      // PVC (for a single PVC, two RR after the beat before it). Runs of one draw nothing, so
      // records made before pvc_run_max came out the same.
      const double coupling = v - t;
      double last = v;
      if (o.pvc_run_max > 1 && !in_af(v)) {
        const int run = 1 + std::min(int(rng.unit() * o.pvc_run_max), o.pvc_run_max - 1);
        for (int k = 1; k < run && last + coupling < o.seconds; ++k) {
          last += coupling;
          r.beats.push_back({last, SyntheticBeat::kPvc, false, form});
        }
      }
      int slots = 2;
      while (t + double(slots) * rr < last + 0.6 * rr) ++slots;
      t = in_af(v) ? v + 1.15 * af_rr_draw() : t + double(slots) * rr;
      last_pvc = true;
      normals = 0;
      continue;
    }
    last_pvc = false;
    t += rr;
  }
  return r;
}

}  // namespace hlm::dsp
