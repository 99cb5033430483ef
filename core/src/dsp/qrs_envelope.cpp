// Moving-sum front end of the QRS detector (see qrs_envelope.h).
#include "dsp/qrs_envelope.h"

#include <algorithm>
#include <cmath>

namespace hlm::dsp::qrs {

namespace {
constexpr ptrdiff_t kShort = 2;       // 25 ms mean: the band's upper edge (~30 Hz)
constexpr ptrdiff_t kLong = 12;       // 125 ms mean, subtracted: its lower edge (~5 Hz)
constexpr ptrdiff_t kIntegrate = 12;  // 125 ms moving mean of the slope

// Mean of x[i-h..i+h] from prefix sums p, the window clipped to [0, n).
inline double clipped_mean(const double* p, ptrdiff_t i, ptrdiff_t h, ptrdiff_t n) {
  const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), b = std::min(n, i + h + 1);
  return (p[b] - p[a]) / double(b - a);
}
}  // namespace

LeadEnvelope lead_envelope(const float* x, size_t n, double sampling_hz) {
  LeadEnvelope e;
  if (n == 0) return e;
  const double ratio = sampling_hz / kRateHz;
  const ptrdiff_t m = static_cast<ptrdiff_t>(std::floor(double(n - 1) / ratio)) + 1;
  const ptrdiff_t nn = static_cast<ptrdiff_t>(n);
  // Resample: a centred boxcar of ~ratio samples against aliasing, then linear interpolation.
  const ptrdiff_t h = std::max<ptrdiff_t>(1, std::lround(ratio)) / 2;
  const float inv_box = 1.0f / float(2 * h + 1);
  auto box = [&](ptrdiff_t i) {
    if (i - h >= 0 && i + h < nn) {
      float s = 0.0f;
      for (ptrdiff_t k = i - h; k <= i + h; ++k) s += x[k];
      return s * inv_box;
    }
    const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), b = std::min(nn - 1, i + h);
    float s = 0.0f;
    for (ptrdiff_t k = a; k <= b; ++k) s += x[k];
    return s / float(b - a + 1);
  };
  // Prefix sums of the resampled lead, in double so that small slopes survive a long
  // baseline sum.
  std::vector<double> p(m + 1);
  p[0] = 0.0;
  for (ptrdiff_t j = 0; j < m; ++j) {
    const double t = double(j) * ratio;
    const ptrdiff_t i = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(t), nn - 1);
    const float f = float(t - double(i));
    const float a = box(i), b = i + 1 < nn ? box(i + 1) : a;
    p[j + 1] = p[j] + (a + f * (b - a));
  }
  // Band-pass: a 25 ms mean minus a 125 ms mean (clipped windows near the ends); its rectified
  // central difference is the slope. Unlike the squared slope, that keeps wide ventricular
  // beats and flutter waves within reach of narrow QRS complexes.
  const double* pp = p.data();
  constexpr double kInvShort = 1.0 / (2 * kShort + 1), kInvLong = 1.0 / (2 * kLong + 1);
  auto band = [&](ptrdiff_t i) {
    i = std::clamp<ptrdiff_t>(i, 0, m - 1);
    if (i >= kLong && i + kLong + 1 <= m)
      return (pp[i + kShort + 1] - pp[i - kShort]) * kInvShort -
             (pp[i + kLong + 1] - pp[i - kLong]) * kInvLong;
    return clipped_mean(pp, i, kShort, m) - clipped_mean(pp, i, kLong, m);
  };
  e.slope.resize(m);
  float* slope = e.slope.data();
  const ptrdiff_t inner_end = m - kLong - 2;  // band(i - 1) and band(i + 1) need no clipping
  for (ptrdiff_t i = 0; i < m; ++i) {
    if (i == kLong + 1 && inner_end > i) {
      for (; i < inner_end; ++i) {
        const double up = (pp[i + kShort + 2] - pp[i - kShort + 1]) * kInvShort -
                          (pp[i + kLong + 2] - pp[i - kLong + 1]) * kInvLong;
        const double down = (pp[i + kShort] - pp[i - kShort - 1]) * kInvShort -
                            (pp[i + kLong] - pp[i - kLong - 1]) * kInvLong;
        slope[i] = float(0.5 * std::fabs(up - down));
      }
      if (i >= m) break;
    }
    slope[i] = float(0.5 * std::fabs(band(i + 1) - band(i - 1)));
  }
  // 125 ms centred moving mean of the slope, by a running sum.
  e.energy.resize(m);
  float* energy = e.energy.data();
  double run = 0.0;
  for (ptrdiff_t i = 0; i < std::min(kIntegrate, m); ++i) run += slope[i];
  constexpr double kInvIntegrate = 1.0 / (2 * kIntegrate + 1);
  for (ptrdiff_t i = 0; i < m; ++i) {
    if (i + kIntegrate < m) run += slope[i + kIntegrate];
    if (i - kIntegrate - 1 >= 0) run -= slope[i - kIntegrate - 1];
    if (i >= kIntegrate && i + kIntegrate < m) {
      energy[i] = float(run * kInvIntegrate);
    } else {
      const ptrdiff_t count =
          std::min(m - 1, i + kIntegrate) - std::max<ptrdiff_t>(0, i - kIntegrate) + 1;
      energy[i] = float(run / double(count));
    }
  }
  return e;
}

std::vector<int64_t> local_maxima(const std::vector<float>& h, int64_t separation) {
  const int64_t m = static_cast<int64_t>(h.size());
  std::vector<int64_t> out;
  // Sliding maximum over [i - separation, i + separation] with a monotonic queue of indices
  // (values decreasing) in a power-of-two ring: O(m), no per-sample allocation.
  int64_t cap = 1;
  while (cap < 2 * separation + 2) cap *= 2;
  const int64_t mask = cap - 1;
  std::vector<int64_t> ring(cap);
  int64_t head = 0, tail = 0;  // the queue is ring[head .. tail), positions taken & mask
  int64_t pushed = 0;          // samples entered so far: [0, pushed)
  for (int64_t i = 0; i < m; ++i) {
    for (; pushed < std::min(m, i + separation + 1); ++pushed) {
      while (tail > head && h[ring[(tail - 1) & mask]] < h[pushed]) --tail;
      ring[tail++ & mask] = pushed;
    }
    while (ring[head & mask] < i - separation) ++head;
    if (i == 0 || i + 1 == m || !(h[i] > h[i - 1] && h[i] >= h[i + 1])) continue;
    if (h[i] < h[ring[head & mask]]) continue;
    // Equal values are rare in real data; the first one wins.
    bool first = true;
    for (int64_t j = std::max<int64_t>(0, i - separation); j < i && first; ++j) first = h[j] != h[i];
    if (first) out.push_back(i);
  }
  return out;
}

}  // namespace hlm::dsp::qrs
