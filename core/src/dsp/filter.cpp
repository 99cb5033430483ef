// Baseline-wander removal and low-pass filtering of ECG leads (see hlm/dsp/filter.h).
#include "hlm/dsp/filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dsp/biquad.h"

namespace hlm::dsp {

namespace {

// Median of a window that always holds 2h+1 values: a max-heap `lo` of the h+1 smallest and a
// min-heap `hi` of the rest, with each slot's heap position tracked so the oldest value can be
// overwritten in place (no lazy deletion, no allocation per sample).
class SlidingMedian {
 public:
  explicit SlidingMedian(const float* init, int width) : val_(init, init + width), where_(width) {
    std::vector<int> order(width);
    for (int i = 0; i < width; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return val_[a] < val_[b]; });
    const int h = width / 2;
    // A descending array is a max-heap and an ascending one a min-heap.
    for (int i = h; i >= 0; --i) lo_.push_back(order[i]);
    for (int i = h + 1; i < width; ++i) hi_.push_back(order[i]);
    for (size_t i = 0; i < lo_.size(); ++i) where_[lo_[i]] = static_cast<int>(i);
    for (size_t i = 0; i < hi_.size(); ++i) where_[hi_[i]] = -1 - static_cast<int>(i);
  }

  float median() const { return val_[lo_[0]]; }

  void replace(int slot, float v) {
    const float old = val_[slot];
    val_[slot] = v;
    const int w = where_[slot];
    if (w >= 0) {
      v > old ? up_lo(w) : down_lo(w);
    } else {
      v < old ? up_hi(-1 - w) : down_hi(-1 - w);
    }
    // One changed value can break the order of the two tops at most once.
    if (!hi_.empty() && val_[lo_[0]] > val_[hi_[0]]) {
      std::swap(lo_[0], hi_[0]);
      where_[lo_[0]] = 0;
      where_[hi_[0]] = -1;
      down_lo(0);
      down_hi(0);
    }
  }

 private:
  void set_lo(int i, int slot) { lo_[i] = slot; where_[slot] = i; }
  void set_hi(int i, int slot) { hi_[i] = slot; where_[slot] = -1 - i; }
  void up_lo(int i) {
    const int s = lo_[i];
    while (i > 0 && val_[lo_[(i - 1) / 2]] < val_[s]) set_lo(i, lo_[(i - 1) / 2]), i = (i - 1) / 2;
    set_lo(i, s);
  }
  void down_lo(int i) {
    const int s = lo_[i], m = static_cast<int>(lo_.size());
    for (int c = 2 * i + 1; c < m; c = 2 * i + 1) {
      if (c + 1 < m && val_[lo_[c + 1]] > val_[lo_[c]]) ++c;
      if (val_[lo_[c]] <= val_[s]) break;
      set_lo(i, lo_[c]);
      i = c;
    }
    set_lo(i, s);
  }
  void up_hi(int i) {
    const int s = hi_[i];
    while (i > 0 && val_[hi_[(i - 1) / 2]] > val_[s]) set_hi(i, hi_[(i - 1) / 2]), i = (i - 1) / 2;
    set_hi(i, s);
  }
  void down_hi(int i) {
    const int s = hi_[i], m = static_cast<int>(hi_.size());
    for (int c = 2 * i + 1; c < m; c = 2 * i + 1) {
      if (c + 1 < m && val_[hi_[c + 1]] < val_[hi_[c]]) ++c;
      if (val_[hi_[c]] >= val_[s]) break;
      set_hi(i, hi_[c]);
      i = c;
    }
    set_hi(i, s);
  }

  std::vector<float> val_;
  std::vector<int> where_;  // >= 0: index in lo_; < 0: -1 - index in hi_
  std::vector<int> lo_, hi_;
};

int odd_width(double seconds, double sampling_hz) {
  const int w = std::max(1, static_cast<int>(std::lround(seconds * sampling_hz)));
  return w | 1;
}

}  // namespace

void highpass(const float* x, size_t n, double sampling_hz, double cutoff_hz, float* out) {
  const size_t pad = static_cast<size_t>(std::ceil(sampling_hz / cutoff_hz));
  filtfilt({butterworth_highpass(sampling_hz, cutoff_hz)}, x, n, pad, out);
}

void lowpass(const float* x, size_t n, double sampling_hz, double cutoff_hz, float* out) {
  if (cutoff_hz >= 0.45 * sampling_hz) {
    if (out != x) std::memcpy(out, x, n * sizeof(float));
    return;
  }
  const size_t pad = static_cast<size_t>(std::ceil(3.0 * sampling_hz / cutoff_hz));
  filtfilt({butterworth_lowpass(sampling_hz, cutoff_hz)}, x, n, pad, out);
}

void running_median(const float* x, size_t n, int width_samples, float* out) {
  if (n == 0) return;
  const int width = std::max(1, width_samples) | 1;
  const int h = width / 2;
  if (width == 1) {
    if (out != x) std::memcpy(out, x, n * sizeof(float));
    return;
  }
  auto at = [&](ptrdiff_t j) { return x[std::clamp<ptrdiff_t>(j, 0, ptrdiff_t(n) - 1)]; };
  std::vector<float> init(width);
  for (int j = 0; j < width; ++j) init[j] = at(j - h);
  SlidingMedian med(init.data(), width);
  out[0] = med.median();
  // Reads run h samples ahead of writes, so out may alias x.
  for (size_t i = 1; i < n; ++i) {
    med.replace(static_cast<int>((i - 1) % width), at(static_cast<ptrdiff_t>(i) + h));
    out[i] = med.median();
  }
}

void remove_baseline_median(const float* x, size_t n, double sampling_hz, float* out) {
  std::vector<float> baseline(n);
  running_median(x, n, odd_width(0.2, sampling_hz), baseline.data());
  running_median(baseline.data(), n, odd_width(0.6, sampling_hz), baseline.data());
  for (size_t i = 0; i < n; ++i) out[i] = x[i] - baseline[i];
}

std::vector<float> clean_ecg(const float* x, size_t n, double sampling_hz,
                             const CleanOptions& options) {
  std::vector<float> out(n);
  const bool low = options.lowpass_hz > 0.0 && options.lowpass_hz < 0.45 * sampling_hz;
  if (options.baseline == BaselineMethod::kHighPass) {
    std::vector<Biquad> sections{butterworth_highpass(sampling_hz, options.highpass_hz)};
    if (low) sections.push_back(butterworth_lowpass(sampling_hz, options.lowpass_hz));
    const size_t pad = static_cast<size_t>(std::ceil(sampling_hz / options.highpass_hz));
    filtfilt(sections, x, n, pad, out.data());
    return out;
  }
  remove_baseline_median(x, n, sampling_hz, out.data());
  if (low) lowpass(out.data(), n, sampling_hz, options.lowpass_hz, out.data());
  return out;
}

}  // namespace hlm::dsp
