// QRS detector (see hlm/dsp/qrs.h): per-lead energy envelopes normalised to their local QRS
// level and fused with weights from each lead's beat-to-noise ratio, candidate peaks accepted
// by adaptive thresholds, and each beat's R peak located on the fiducial lead.
#include "hlm/dsp/qrs.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <cstdlib>

#include "dsp/qrs_decide.h"
#include "dsp/qrs_envelope.h"
#include "hlm/errors.h"

namespace hlm::dsp {

namespace {
using qrs::Candidate;
using qrs::Envelope;
using qrs::kBlock;
using qrs::kRateHz;

constexpr int kScaleHalfBlocks = 15;   // QRS level: median over about a minute
constexpr int kQualityHalfBlocks = 2;  // beat-to-noise ratio: over about 10 s

std::vector<float> weighted_sum(const std::vector<Envelope>& env,
                                const std::vector<std::vector<float>>& weight, bool slope) {
  const size_t m = env[0].energy.size();
  std::vector<float> out(m, 0.0f);
  for (size_t i = 0; i < m; ++i) {
    const size_t b = i / kBlock;
    float s = 0.0f, wsum = 0.0f;
    for (size_t k = 0; k < env.size(); ++k) {
      s += weight[k][b] * (slope ? env[k].slope[i] : env[k].energy[i]);
      wsum += weight[k][b];
    }
    out[i] = s / wsum;
  }
  return out;
}

// Per block, how clearly a lead's beats stand out: the median of its block maxima over the
// median of its block medians, both over the blocks around. A flat lead scores near 0, a noisy
// one near 1, a clean one in the hundreds; squared, so the clean lead dominates.
std::vector<float> lead_weight(const Envelope& e) {
  const size_t m = e.energy.size();
  const size_t blocks = (m + kBlock - 1) / kBlock;
  std::vector<float> block_max(blocks), block_mid(blocks), w(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const auto first = e.energy.begin() + b * kBlock;
    const auto last = e.energy.begin() + std::min(m, (b + 1) * kBlock);
    block_max[b] = *std::max_element(first, last);
    block_mid[b] = qrs::median(std::vector<float>(first, last));
  }
  for (size_t b = 0; b < blocks; ++b) {
    const size_t a = b >= kQualityHalfBlocks ? b - kQualityHalfBlocks : 0;
    const size_t z = std::min(blocks, b + kQualityHalfBlocks + 1);
    const float peak = qrs::median(std::vector<float>(block_max.begin() + a, block_max.begin() + z));
    const float mid = qrs::median(std::vector<float>(block_mid.begin() + a, block_mid.begin() + z));
    const float q = peak / (mid + 0.002f);
    w[b] = q * q + 1e-6f;
  }
  return w;
}

// R peak on the native-rate lead near a detection: the extreme of the lead minus its 120 ms
// moving mean, within 80 ms.
int64_t locate_r_peak(const float* x, size_t n, double fs, int64_t centre) {
  const int64_t search = std::max<int64_t>(1, std::llround(0.08 * fs));
  const int64_t h = std::max<int64_t>(1, std::llround(0.06 * fs));
  const int64_t a = std::max<int64_t>(0, centre - search - h);
  const int64_t b = std::min<int64_t>(int64_t(n), centre + search + h + 1);
  if (a >= b) return std::clamp<int64_t>(centre, 0, int64_t(n) - 1);
  std::vector<double> p(b - a + 1, 0.0);
  for (int64_t i = a; i < b; ++i) p[i - a + 1] = p[i - a] + x[i];
  int64_t best = std::clamp<int64_t>(centre, a, b - 1);
  double best_v = -1.0;
  for (int64_t i = std::max(a, centre - search); i <= std::min(b - 1, centre + search); ++i) {
    const int64_t lo = std::max(a, i - h), hi = std::min(b, i + h + 1);
    const double v = std::fabs(x[i] - (p[hi - a] - p[lo - a]) / double(hi - lo));
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
    throw ConfigError("detect_qrs: sampling_hz=" + std::to_string(sampling_hz) + " must be > 0");
  if (leads_mv.empty() || options.fiducial_lead < 0 ||
      options.fiducial_lead >= static_cast<int>(leads_mv.size()))
    throw ConfigError("detect_qrs: fiducial_lead=" + std::to_string(options.fiducial_lead) +
                      " but " + std::to_string(leads_mv.size()) + " lead(s) given");
  if (n < 2) return {};
  std::vector<Envelope> env;
  for (const float* lead : leads_mv) {
    env.push_back(qrs::envelope(qrs::resample(lead, n, sampling_hz)));
    qrs::normalise(env.back(), kScaleHalfBlocks);
  }
  static const double kSep = getenv("SEP") ? atof(getenv("SEP")) : 0.10;
  const int64_t separation = std::llround(kSep * kRateHz);
  std::vector<std::vector<float>> weight;
  for (const Envelope& e : env) weight.push_back(lead_weight(e));
  const std::vector<float> fused = weighted_sum(env, weight, false);
  const std::vector<float> fused_slope = weighted_sum(env, weight, true);
  const std::vector<Candidate> beats =
      qrs::decide(qrs::find_candidates(fused, fused_slope, separation), options);

  // R peaks at the native rate on the fiducial lead; two beats cannot share half a refractory
  // period after the move.
  const float* fid = leads_mv[options.fiducial_lead];
  std::vector<int64_t> out;
  const int64_t native_refractory = std::llround(options.refractory_seconds * sampling_hz);
  for (const Candidate& c : beats) {
    const int64_t centre = std::llround(double(c.i) * sampling_hz / kRateHz);
    const int64_t r = locate_r_peak(fid, n, sampling_hz, centre);
    if (!out.empty() && r - out.back() < native_refractory / 2) continue;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hlm::dsp
