// Fixed-length, mean-free beat windows around R peaks (see hlm/dsp/beat_window.h).
#include "hlm/dsp/beat_window.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "hlm/errors.h"
#include "util/target_clones.h"

namespace hlm::dsp {

namespace {
// One window's m points, point j at first + j step (not before -1e-6, not past sample n - 1),
// each linearly interpolated between the samples around it, less their mean. Positions come
// from a loop that vectorises and the samples are read after it; the mean is summed in order,
// so its bits do not depend on the instruction set (nor does anything else: the file is built
// without floating-point contraction).
HLM_VECTOR_CLONES
void cut_one(const float* x, size_t n, double first, double step, int m, int64_t* at, double* frac,
             double* w, float* out) {
  if (n < 2) {
    for (int j = 0; j < m; ++j) w[j] = x[0];
  } else {
    const int64_t last_pair = int64_t(n) - 2;
    for (int j = 0; j < m; ++j) {
      const double t = first + step * j;
      const int64_t i0 = std::min(t > 0.0 ? static_cast<int64_t>(t) : int64_t(0), last_pair);
      at[j] = i0;
      frac[j] = t - double(i0);
    }
    for (int j = 0; j < m; ++j) {
      const float* p = x + at[j];
      w[j] = p[0] + frac[j] * (double(p[1]) - p[0]);
    }
  }
  double sum = 0.0;
  for (int j = 0; j < m; ++j) sum += w[j];
  const double mean = sum / m;
  for (int j = 0; j < m; ++j) out[j] = static_cast<float>(w[j] - mean);
}
}  // namespace

std::vector<size_t> cut_beat_windows(const float* x, size_t n, double sampling_hz,
                                     const std::vector<int64_t>& r_peaks,
                                     const BeatWindowOptions& options,
                                     std::vector<float>* features) {
  // Written so that NaN fails each test.
  if (options.points < 2 || !(options.before_seconds >= 0) || !(options.after_seconds >= 0) ||
      !(options.before_seconds + options.after_seconds > 0))
    throw ConfigError(
        "beat window: points={} before_seconds={:f} after_seconds={:f} "
        "(need points >= 2 and a window of positive length)",
        options.points, options.before_seconds, options.after_seconds);
  if (!(sampling_hz > 0))
    throw ConfigError("beat window: sampling_hz={:f} must be > 0", sampling_hz);
  const int m = options.points;
  const double start = -options.before_seconds * sampling_hz;
  const double step = (options.before_seconds + options.after_seconds) * sampling_hz / (m - 1);
  std::vector<size_t> kept;
  kept.reserve(r_peaks.size());
  features->reserve(features->size() + r_peaks.size() * size_t(m));  // no regrowth per beat
  std::vector<double> w(m), frac(m);
  std::vector<int64_t> at(m);
  // A window spans a few hundred samples, most of them out of cache: those of the beat after
  // next are fetched while this one is cut.
  constexpr size_t kAhead = 2, kLine = 64 / sizeof(float);
  const int64_t span = int64_t(std::ceil(-start + options.after_seconds * sampling_hz)) + 2;
  for (size_t b = 0; b < r_peaks.size(); ++b) {
    if (b + kAhead < r_peaks.size()) {
      const int64_t from = std::max<int64_t>(0, r_peaks[b + kAhead] + int64_t(std::floor(start)));
      const int64_t to = std::min<int64_t>(int64_t(n), from + span);
      for (int64_t i = from; i < to; i += int64_t(kLine)) __builtin_prefetch(x + i);
    }
    const double first = double(r_peaks[b]) + start;
    const double last = double(r_peaks[b]) + options.after_seconds * sampling_hz;
    // The tolerance keeps a window that ends exactly on the last sample despite rounding.
    if (n == 0 || first < -1e-6 || last > double(n - 1) + 1e-6) continue;
    const size_t from = features->size();
    features->resize(from + size_t(m));
    cut_one(x, n, first, step, m, at.data(), frac.data(), w.data(), features->data() + from);
    kept.push_back(b);
  }
  return kept;
}

}  // namespace hlm::dsp
