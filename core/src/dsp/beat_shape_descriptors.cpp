// A beat's window and its window minus its template, resampled (see beat_shape_descriptors.h).
#include "hlm/dsp/beat_shape_descriptors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hlm/dsp/template_descriptors.h"
#include "hlm/errors.h"

namespace hlm {
namespace {

// x at fractional index `at` of a row of n values, linearly interpolated.
double interpolate(const float* x, size_t n, double at) {
  const size_t i = std::min(size_t(at), n - 1), j = std::min(i + 1, n - 1);
  const double f = at - double(i);
  return double(x[i]) + f * (double(x[j]) - x[i]);
}

}  // namespace

std::vector<std::string> beat_shape_descriptor_names(const dsp::BeatWindowOptions& window,
                                                     int points) {
  std::vector<std::string> beat, difference;
  const double span = window.before_seconds + window.after_seconds;
  for (int k = 0; k < points; ++k) {
    const double seconds = -window.before_seconds + span * k / std::max(points - 1, 1);
    beat.push_back(fmt::format("beat at {:+.3f} s / template QRS", seconds));
    difference.push_back(fmt::format("beat minus template at {:+.3f} s / template QRS", seconds));
  }
  beat.insert(beat.end(), difference.begin(), difference.end());
  return beat;
}

std::vector<float> beat_shape_descriptors(const float* windows,
                                          const dsp::BeatWindowOptions& window,
                                          const std::vector<int64_t>& row_of_beat,
                                          const std::vector<float>& templates, int points) {
  const size_t n = row_of_beat.size(), dim = size_t(window.points);
  if (points < 2 || !covers_template_descriptors(window) || window.points < 2 ||
      templates.size() != n * dim)
    throw InternalError(
        "beat_shape_descriptors: {} points from windows of {} points, -{} s to +{} s ({} "
        "template values for {} beats)",
        points, window.points, window.before_seconds, window.after_seconds, templates.size(), n);
  const size_t width = size_t(beat_shape_descriptor_count(points)), p = size_t(points);
  std::vector<float> out(n * width);
  const double step = double(dim - 1) / double(points - 1);
  for (size_t i = 0; i < n; ++i) {
    const float* t = templates.data() + i * dim;
    const float* beat = row_of_beat[i] >= 0 ? windows + size_t(row_of_beat[i]) * dim : t;
    const TemplateQrs qrs = template_qrs(t, window);
    const double scale = qrs.sign / qrs.amplitude;
    float* f = out.data() + i * width;
    for (size_t k = 0; k < p; ++k) {
      const double b = interpolate(beat, dim, double(k) * step);
      f[k] = float((b - qrs.isoelectric) * scale);
      f[p + k] = float((b - interpolate(t, dim, double(k) * step)) * scale);
    }
  }
  return out;
}

}  // namespace hlm
