// Moving-sum front end of the QRS detector (see qrs_envelope.h).
#include "dsp/qrs_envelope.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace hlm::dsp::qrs {

float median(std::vector<float> v) {
  if (v.empty()) return 0.0f;
  auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

namespace {
// Prefix sums in double: float would lose the small QRS slopes under a long baseline sum.
std::vector<double> prefix_sum(const float* x, size_t n) {
  std::vector<double> p(n + 1);
  double s = 0.0;
  p[0] = 0.0;
  for (size_t i = 0; i < n; ++i) p[i + 1] = s += x[i];
  return p;
}

// Mean of x[i-h..i+h] with the window clipped at the ends.
inline double centred_mean(const std::vector<double>& p, ptrdiff_t i, ptrdiff_t h, ptrdiff_t n) {
  const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), b = std::min(n, i + h + 1);
  return (p[b] - p[a]) / double(b - a);
}
}  // namespace

std::vector<float> resample(const float* x, size_t n, double sampling_hz) {
  const double ratio = sampling_hz / kRateHz;
  const size_t m = n == 0 ? 0 : static_cast<size_t>(std::floor((n - 1) / ratio)) + 1;
  std::vector<float> out(m);
  const int box = std::max(1, static_cast<int>(std::lround(ratio)));
  if (box == 1) {
    for (size_t j = 0; j < m; ++j) {
      const double t = j * ratio;
      const size_t i = std::min(static_cast<size_t>(t), n - 1);
      const double f = t - double(i);
      out[j] = i + 1 < n ? float(x[i] + f * (x[i + 1] - x[i])) : x[i];
    }
    return out;
  }
  // Boxcar of `box` samples, centred, then interpolated: enough anti-aliasing for a detector
  // that only looks below 30 Hz.
  const std::vector<double> p = prefix_sum(x, n);
  const ptrdiff_t h = box / 2, nn = static_cast<ptrdiff_t>(n);
  for (size_t j = 0; j < m; ++j) {
    const double t = j * ratio;
    const ptrdiff_t i = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(t), nn - 1);
    const double f = t - double(i);
    const double a = centred_mean(p, i, h, nn);
    const double b = i + 1 < nn ? centred_mean(p, i + 1, h, nn) : a;
    out[j] = static_cast<float>(a + f * (b - a));
  }
  return out;
}

Envelope envelope(const std::vector<float>& x) {
  const ptrdiff_t n = static_cast<ptrdiff_t>(x.size());
  Envelope e;
  e.band.resize(n);
  e.slope.resize(n);
  e.energy.resize(n);
  if (n == 0) return e;
  // Difference of a 25 ms and a 125 ms centred moving mean: a linear-phase band-pass that
  // keeps the QRS and drops baseline, P and most of T.
  const std::vector<double> p = prefix_sum(x.data(), x.size());
  static const ptrdiff_t kShort = getenv("KS") ? atoi(getenv("KS")) : 2, kLong = getenv("KL") ? atoi(getenv("KL")) : 12;
  for (ptrdiff_t i = 0; i < n; ++i)
    e.band[i] = static_cast<float>(centred_mean(p, i, kShort, n) - centred_mean(p, i, kLong, n));
  std::vector<float> sq(n);
  for (ptrdiff_t i = 0; i < n; ++i) {
    const float d = (e.band[std::min(i + 1, n - 1)] - e.band[std::max<ptrdiff_t>(i - 1, 0)]) * 0.5f;
    e.slope[i] = std::fabs(d);
    static const bool kAbs = getenv("KSQ") == nullptr;
    sq[i] = kAbs ? std::fabs(d) : d * d;
  }
  const std::vector<double> q = prefix_sum(sq.data(), sq.size());
  static const ptrdiff_t kIntegrate = getenv("KI") ? atoi(getenv("KI")) : 12;  // 105 ms
  for (ptrdiff_t i = 0; i < n; ++i) e.energy[i] = static_cast<float>(centred_mean(q, i, kIntegrate, n));
  return e;
}

void normalise(Envelope& e, int half_blocks) {
  const size_t m = e.energy.size();
  const size_t blocks = (m + kBlock - 1) / kBlock;
  std::vector<float> block_max(blocks), level(blocks);
  for (size_t b = 0; b < blocks; ++b)
    block_max[b] = *std::max_element(e.energy.begin() + b * kBlock,
                                     e.energy.begin() + std::min(m, (b + 1) * kBlock));
  for (size_t b = 0; b < blocks; ++b) {
    const size_t a = b >= size_t(half_blocks) ? b - half_blocks : 0;
    const size_t z = std::min(blocks, b + half_blocks + 1);
    level[b] = std::max(median(std::vector<float>(block_max.begin() + a, block_max.begin() + z)),
                        1e-12f);
  }
  // Interpolate the level between block centres so the scale has no steps.
  for (size_t i = 0; i < m; ++i) {
    const double pos = (double(i) + 0.5) / kBlock - 0.5;
    const size_t b0 = pos <= 0 ? 0 : std::min(blocks - 1, size_t(pos));
    const size_t b1 = std::min(blocks - 1, b0 + 1);
    const double f = std::clamp(pos - double(b0), 0.0, 1.0);
    const float lv = static_cast<float>(level[b0] + f * (level[b1] - level[b0]));
    e.energy[i] /= lv;
    e.slope[i] /= std::sqrt(lv);
  }
}

std::vector<Candidate> find_candidates(const std::vector<float>& height,
                                       const std::vector<float>& slope, int64_t separation) {
  const int64_t m = static_cast<int64_t>(height.size());
  const int64_t slope_h = std::llround(0.06 * kRateHz);
  std::vector<Candidate> out;
  for (int64_t i = 1; i + 1 < m; ++i) {
    if (!(height[i] > height[i - 1] && height[i] >= height[i + 1])) continue;
    bool top = true;
    for (int64_t j = std::max<int64_t>(0, i - separation); j <= std::min(m - 1, i + separation) && top; ++j)
      top = height[j] < height[i] || (height[j] == height[i] && j >= i);
    if (!top) continue;
    Candidate c;
    c.i = i;
    c.height = height[i];
    for (int64_t j = std::max<int64_t>(0, i - slope_h); j <= std::min(m - 1, i + slope_h); ++j)
      c.slope = std::max(c.slope, slope[j]);
    out.push_back(c);
  }
  return out;
}

}  // namespace hlm::dsp::qrs
