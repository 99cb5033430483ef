// Descriptors of each beat's template and of the beat against it (see template_descriptors.h).
#include "hlm/dsp/template_descriptors.h"

#include <algorithm>
#include <cmath>

#include "dsp/pearson.h"
#include "dsp/point_clock.h"
#include "hlm/dsp/beat_morphology.h"
#include "hlm/errors.h"

namespace hlm {
namespace {

using dsp::PointClock;

double mean(const float* x, int first, int end) {
  double s = 0;
  for (int j = first; j < end; ++j) s += x[j];
  return end > first ? s / (end - first) : 0.0;
}

double rms_of_difference(const float* a, const float* b, int first, int end) {
  double s = 0;
  for (int j = first; j < end; ++j) s += (double(a[j]) - b[j]) * (double(a[j]) - b[j]);
  return end > first ? std::sqrt(s / (end - first)) : 0.0;
}

// Outside [skip_first, skip_end): a sharp QRS has large second differences of its own.
double second_difference_rms(const float* x, int n, int skip_first, int skip_end) {
  double s = 0;
  int count = 0;
  for (int j = 1; j + 1 < n; ++j) {
    if (j >= skip_first && j < skip_end) continue;
    const double d = double(x[j + 1]) - 2.0 * x[j] + x[j - 1];
    s += d * d, ++count;
  }
  return count > 0 ? std::sqrt(s / count) : 0.0;
}

// Amplitudes are divided by the QRS's, floored so that a flat template gives finite values.
constexpr double kSmallestQrs = 1e-3;

// The template's own descriptors (the first seven) and its QRS amplitude.
struct TemplateShape {
  float values[7] = {};
  double qrs = kSmallestQrs;
};

TemplateShape describe_template(const float* t, const PointClock& clock,
                                const dsp::BeatWindowOptions& window) {
  TemplateShape out;
  const TemplateQrs qrs = template_qrs(t, window);
  const double base = qrs.isoelectric, sign = qrs.sign;
  out.qrs = qrs.amplitude;

  // Width: from the first to the last point where the template changes faster than a fraction
  // of its steepest slope near the R peak.
  const int s0 = clock.first(-kQrsSearchSeconds), s1 = clock.end(kQrsSearchSeconds);
  double steepest = 0;
  for (int j = s0; j + 1 < s1; ++j)
    steepest = std::max(steepest, std::abs(double(t[j + 1]) - t[j]));
  int onset = -1, offset = -1;
  for (int j = s0; j + 1 < s1; ++j)
    if (steepest > 0 && std::abs(double(t[j + 1]) - t[j]) > kQrsSlopeFraction * steepest) {
      if (onset < 0) onset = j;
      offset = j + 1;
    }
  const double width = onset < 0 ? 0.0 : (offset - onset) / clock.per_second;

  // The highest and lowest point of a wave's part, against the isoelectric level.
  auto wave = [&](const double(&seconds)[2], double& top, double& bottom) {
    top = bottom = 0.0;
    for (int j = clock.first(seconds[0]); j < clock.end(seconds[1]); ++j)
      top = std::max(top, sign * (t[j] - base)), bottom = std::min(bottom, sign * (t[j] - base));
  };
  double p_top, p_bottom, t_top, t_bottom;
  wave(kPWaveSeconds, p_top, p_bottom);
  wave(kTWaveSeconds, t_top, t_bottom);

  out.values[0] = float(width);
  out.values[1] = float(std::log(out.qrs + 0.01));
  out.values[2] = float(qrs.main_deflection / out.qrs);
  out.values[3] = float(p_top / out.qrs);
  out.values[4] = float((p_top - p_bottom) / out.qrs);
  out.values[5] = float(t_top / out.qrs);
  out.values[6] = float(t_bottom / out.qrs);
  return out;
}

}  // namespace

TemplateQrs template_qrs(const float* t, const dsp::BeatWindowOptions& window) {
  const PointClock clock(window);
  TemplateQrs out;
  out.isoelectric = mean(t, clock.first(kIsoelectricSeconds[0]), clock.end(kIsoelectricSeconds[1]));
  double hi = 0, lo = 0;
  for (int j = clock.first(-kQrsHalfWidthSeconds); j < clock.end(kQrsHalfWidthSeconds); ++j)
    hi = std::max(hi, t[j] - out.isoelectric), lo = std::min(lo, t[j] - out.isoelectric);
  out.amplitude = std::max(hi - lo, kSmallestQrs);
  out.sign = hi >= -lo ? 1.0 : -1.0;
  out.main_deflection = std::max(hi, -lo);
  return out;
}

bool covers_template_descriptors(const dsp::BeatWindowOptions& window) {
  return window.before_seconds >= -kPWaveSeconds[0] - 1e-9 &&
         window.after_seconds >= kTWaveSeconds[1] - 1e-9;
}

std::vector<float> template_descriptors(const float* windows, const dsp::BeatWindowOptions& window,
                                        const std::vector<int64_t>& row_of_beat,
                                        const std::vector<float>& templates) {
  const size_t n = row_of_beat.size(), dim = size_t(window.points);
  if (!covers_template_descriptors(window) || window.points < 3 || templates.size() != n * dim)
    throw InternalError(
        "template_descriptors: windows of {} points from -{} s to +{} s ({} template values for "
        "{} beats) do not cover the parts described",
        window.points, window.before_seconds, window.after_seconds, templates.size(), n);
  const PointClock clock(window);
  const int p0 = clock.first(kPWaveSeconds[0]), p1 = clock.end(kPWaveSeconds[1]);
  const int q0 = clock.first(-kQrsHalfWidthSeconds), q1 = clock.end(kQrsHalfWidthSeconds);
  std::vector<float> out(n * kTemplateDescriptorCount);
  // Neighbouring beats often share a template: it is described once while it stays the same.
  std::vector<float> last;
  TemplateShape shape;
  for (size_t i = 0; i < n; ++i) {
    const float* t = templates.data() + i * dim;
    if (last.empty() || !std::equal(last.begin(), last.end(), t)) {
      last.assign(t, t + dim);
      shape = describe_template(t, clock, window);
    }
    const float* beat = row_of_beat[i] >= 0 ? windows + size_t(row_of_beat[i]) * dim : t;
    float* f = out.data() + i * kTemplateDescriptorCount;
    std::copy(std::begin(shape.values), std::end(shape.values), f);
    f[7] = row_of_beat[i] >= 0 ? float(dsp::pearson_correlation(beat, t, dim)) : 1.0f;
    f[8] = float(rms_of_difference(beat, t, p0, p1) / shape.qrs);
    f[9] = float(second_difference_rms(beat, int(dim), q0, q1) / shape.qrs);
  }
  return out;
}

}  // namespace hlm
