// Baseline-wander removal and low-pass filtering of ECG leads (see hlm/dsp/filter.h).
#include "hlm/dsp/filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dsp/biquad.h"

namespace hlm::dsp {

namespace {

// First position in a[0, n) whose value is not below x: a binary search without branches
// (the compiler turns the choice into a conditional move), as the comparisons are unpredictable.
inline size_t lower_rank(const float* a, size_t n, float x) {
  const float* base = a;
  for (size_t len = n; len > 1;) {
    const size_t half = len / 2;
    base = base[half - 1] < x ? base + half : base;
    len -= half;
  }
  return size_t(base - a) + (n > 0 && *base < x);
}

// Median of a window that always holds `width` values, kept sorted. Replacing the oldest
// value finds its rank and the new value's by binary search (O(log w)) and shifts the values
// between the two ranks by one place: few for a smooth signal such as a baseline, never more
// than w (a few hundred floats, one memmove).
class SlidingMedian {
 public:
  SlidingMedian(const float* init, int width) : window_(init, init + width), sorted_(window_) {
    std::sort(sorted_.begin(), sorted_.end());
  }

  float median() const { return sorted_[sorted_.size() / 2]; }

  void replace(int slot, float v) {
    const float old = window_[slot];
    window_[slot] = v;
    float* a = sorted_.data();
    const size_t n = sorted_.size();
    const size_t from = lower_rank(a, n, old);  // holds `old`: it entered with its slot
    size_t to = lower_rank(a, n, v);
    if (to > from) {
      --to;  // v lands after the values below it, which move down one place
      std::memmove(a + from, a + from + 1, sizeof(float) * (to - from));
    } else {
      std::memmove(a + to + 1, a + to, sizeof(float) * (from - to));
    }
    a[to] = v;
  }

 private:
  std::vector<float> window_;  // values by slot, the oldest overwritten first
  std::vector<float> sorted_;
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
  int slot = 0;
  for (size_t i = 1; i < n; ++i) {
    med.replace(slot, at(static_cast<ptrdiff_t>(i) + h));
    slot = slot + 1 == width ? 0 : slot + 1;
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
