// Moving-sum front end of the QRS detector (see qrs_envelope.h).
#include "dsp/qrs_envelope.h"

#include <algorithm>
#include <cmath>

namespace hlm::dsp::qrs {

namespace {
constexpr ptrdiff_t kShort = 2;       // 25 ms mean: the band's upper edge (~30 Hz)
constexpr ptrdiff_t kLong = 12;       // 125 ms mean, subtracted: its lower edge (~5 Hz)
constexpr ptrdiff_t kIntegrate = 12;  // 125 ms moving mean of the slope

// Centred moving means of v over 5 and 25 samples (windows clipped at the ends). Interior
// values come from sums of five 5-sample sums: short, independent loops that vectorise, and
// float suffices since nothing accumulates along the record.
void moving_means(const std::vector<float>& v, std::vector<float>& mean5,
                  std::vector<float>& mean25) {
  static_assert(kShort == 2 && kLong == 12 && kIntegrate == 12,
                "sums are built from 5-sample sums");
  const ptrdiff_t m = static_cast<ptrdiff_t>(v.size());
  thread_local std::vector<float> sum5;
  sum5.assign(m, 0.0f);
  mean5.resize(m);
  mean25.resize(m);
  for (ptrdiff_t i = 2; i + 2 < m; ++i) sum5[i] = v[i - 2] + v[i - 1] + v[i] + v[i + 1] + v[i + 2];
  for (ptrdiff_t i = 2; i + 2 < m; ++i) mean5[i] = sum5[i] * 0.2f;
  for (ptrdiff_t i = 12; i + 12 < m; ++i)
    mean25[i] = (sum5[i - 10] + sum5[i - 5] + sum5[i] + sum5[i + 5] + sum5[i + 10]) * 0.04f;
  // Near the ends, the clipped windows directly.
  auto clipped = [&](ptrdiff_t i, ptrdiff_t h) {
    const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), z = std::min(m - 1, i + h);
    float sum = 0.0f;
    for (ptrdiff_t k = a; k <= z; ++k) sum += v[k];
    return sum / float(z - a + 1);
  };
  for (ptrdiff_t i = 0; i < m; ++i) {
    if (i == 12 && m > 24) i = m - 12;
    if (i < 2 || i + 2 >= m) mean5[i] = clipped(i, 2);
    mean25[i] = clipped(i, 12);
  }
  release_if_large(sum5);
}
}  // namespace

void lead_envelope(const float* x, size_t n, double sampling_hz, LeadEnvelope& e) {
  e.slope.clear();
  e.energy.clear();
  if (n == 0) return;
  const double ratio = sampling_hz / kRateHz;
  const ptrdiff_t m = static_cast<ptrdiff_t>(std::floor(double(n - 1) / ratio)) + 1;
  const ptrdiff_t nn = static_cast<ptrdiff_t>(n);
  // Resample: a centred boxcar of ~ratio samples against aliasing, then linear interpolation.
  // Work buffers are kept per thread: fresh pages cost more than the arithmetic.
  const ptrdiff_t h = std::max<ptrdiff_t>(1, std::lround(ratio)) / 2;
  thread_local std::vector<float> smooth, y, band, mean5, mean25;
  const float* src = x;
  if (h > 0) {
    smooth.resize(n);
    const float inv = 1.0f / float(2 * h + 1);
    if (h == 1) {  // 360 Hz and similar: a 3-tap loop the compiler vectorises
      for (ptrdiff_t i = 1; i + 1 < nn; ++i) smooth[i] = (x[i - 1] + x[i] + x[i + 1]) * inv;
    } else {
      for (ptrdiff_t i = h; i + h < nn; ++i) {
        float sum = 0.0f;
        for (ptrdiff_t k = -h; k <= h; ++k) sum += x[i + k];
        smooth[i] = sum * inv;
      }
    }
    for (ptrdiff_t i = 0; i < nn; ++i) {
      if (i == h && nn > 2 * h) i = nn - h;
      const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), z = std::min(nn - 1, i + h);
      float sum = 0.0f;
      for (ptrdiff_t k = a; k <= z; ++k) sum += x[k];
      smooth[i] = sum / float(z - a + 1);
    }
    src = smooth.data();
  }
  y.resize(m);
  for (ptrdiff_t j = 0; j < m; ++j) {
    const double t = double(j) * ratio;
    const ptrdiff_t i = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(t), nn - 1);
    const float f = float(t - double(i));
    y[j] = i + 1 < nn ? src[i] + f * (src[i + 1] - src[i]) : src[i];
  }
  // Band-pass: a 25 ms mean minus a 125 ms mean; its rectified central difference is the
  // slope. Unlike the squared slope, that keeps wide ventricular beats and flutter waves within
  // reach of narrow QRS complexes.
  moving_means(y, mean5, mean25);
  band.resize(m);
  for (ptrdiff_t i = 0; i < m; ++i) band[i] = mean5[i] - mean25[i];
  e.slope.resize(m);
  for (ptrdiff_t i = 1; i + 1 < m; ++i) e.slope[i] = 0.5f * std::fabs(band[i + 1] - band[i - 1]);
  e.slope[0] = m > 1 ? 0.5f * std::fabs(band[1] - band[0]) : 0.0f;
  if (m > 1) e.slope[m - 1] = 0.5f * std::fabs(band[m - 1] - band[m - 2]);
  // 125 ms centred moving mean of the slope.
  moving_means(e.slope, mean5, e.energy);
  for (std::vector<float>* v : {&smooth, &y, &band, &mean5, &mean25}) release_if_large(*v);
}

std::vector<int64_t> local_maxima(const std::vector<float>& h, int64_t separation) {
  const int64_t m = static_cast<int64_t>(h.size()), w = 2 * separation + 1;
  std::vector<int64_t> out;
  if (m < 3) return out;
  // Maximum over [i - separation, i + separation] for every i in O(m) (van Herk / Gil-Werman):
  // running maxima from the left and from the right within blocks of w samples.
  thread_local std::vector<float> left, right;  // reused: fresh pages cost more than the scan
  left.resize(m);
  right.resize(m);
  for (int64_t start = 0; start < m; start += w) {
    const int64_t end = std::min(m, start + w);
    left[start] = h[start];
    for (int64_t i = start + 1; i < end; ++i) left[i] = std::max(left[i - 1], h[i]);
    right[end - 1] = h[end - 1];
    for (int64_t i = end - 2; i >= start; --i) right[i] = std::max(right[i + 1], h[i]);
  }
  for (int64_t i = 1; i + 1 < m; ++i) {
    const int64_t a = std::max<int64_t>(0, i - separation), z = std::min(m - 1, i + separation);
    // Window maxima are rare, so this test, first, is almost always false and well predicted.
    const float window_max = z - a + 1 == w ? std::max(right[a], left[z])
                                            : *std::max_element(h.begin() + a, h.begin() + z + 1);
    if (h[i] < window_max || !(h[i] > h[i - 1] && h[i] >= h[i + 1])) continue;
    // Equal values are rare in real data; the first one wins.
    bool first = true;
    for (int64_t j = a; j < i && first; ++j) first = h[j] != h[i];
    if (first) out.push_back(i);
  }
  release_if_large(left);
  release_if_large(right);
  return out;
}

}  // namespace hlm::dsp::qrs
