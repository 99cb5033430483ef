// Fixed-length, mean-free beat windows around R peaks (see hlm/dsp/beat_window.h).
#include "hlm/dsp/beat_window.h"

#include <cmath>
#include <string>

#include "hlm/errors.h"

namespace hlm::dsp {

std::vector<size_t> cut_beat_windows(const float* x, size_t n, double sampling_hz,
                                     const std::vector<int64_t>& r_peaks,
                                     const BeatWindowOptions& options,
                                     std::vector<float>* features) {
  if (options.points < 2 || options.before_seconds < 0 || options.after_seconds < 0 ||
      options.before_seconds + options.after_seconds <= 0)
    throw ConfigError(
        "beat window: points={} before_seconds={:f} after_seconds={:f} "
        "(need points >= 2 and a window of positive length)",
        options.points, options.before_seconds, options.after_seconds);
  const int m = options.points;
  const double start = -options.before_seconds * sampling_hz;
  const double step = (options.before_seconds + options.after_seconds) * sampling_hz / (m - 1);
  std::vector<size_t> kept;
  kept.reserve(r_peaks.size());
  features->reserve(features->size() + r_peaks.size() * size_t(m));  // no regrowth per beat
  std::vector<double> w(m);
  for (size_t b = 0; b < r_peaks.size(); ++b) {
    const double first = double(r_peaks[b]) + start;
    const double last = double(r_peaks[b]) + options.after_seconds * sampling_hz;
    // The tolerance keeps a window that ends exactly on the last sample despite rounding.
    if (n == 0 || first < -1e-6 || last > double(n - 1) + 1e-6) continue;
    double sum = 0.0;
    for (int j = 0; j < m; ++j) {
      const double t = first + step * j;
      size_t i0 = t > 0.0 ? static_cast<size_t>(t) : 0;
      if (i0 >= n - 1) i0 = n > 1 ? n - 2 : 0;
      const double f = n > 1 ? t - double(i0) : 0.0;
      const double v = n > 1 ? x[i0] + f * (double(x[i0 + 1]) - x[i0]) : x[0];
      w[j] = v;
      sum += v;
    }
    const double mean = sum / m;
    for (int j = 0; j < m; ++j) features->push_back(static_cast<float>(w[j] - mean));
    kept.push_back(b);
  }
  return kept;
}

}  // namespace hlm::dsp
