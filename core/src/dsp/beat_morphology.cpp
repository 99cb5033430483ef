// Beat shapes against their record's template (see beat_morphology.h).
#include "hlm/dsp/beat_morphology.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dsp/pearson.h"
#include "hlm/errors.h"

namespace hlm {

BeatShapeLayout beat_shape_layout(int points, double before_s, double after_s) {
  const double per_second = (points - 1) / (before_s + after_s), r = before_s * per_second;
  BeatShapeLayout layout;
  layout.points = points;
  layout.qrs_first = std::clamp(int(std::ceil(r - kQrsHalfWidthSeconds * per_second)), 0, points);
  layout.qrs_end =
      std::clamp(int(std::floor(r + kQrsHalfWidthSeconds * per_second)) + 1, 0, points);
  return layout;
}

BeatShapeLayout codebook_shape_layout(const std::string& metadata, int dim,
                                      const std::string& path) {
  const std::string prefix = "beat-vq ";
  nlohmann::json p;
  if (metadata.rfind(prefix, 0) == 0)
    p = nlohmann::json::parse(metadata.substr(prefix.size()), nullptr, /*allow_exceptions=*/false);
  if (!p.is_object() || !p.contains("points") || !p.contains("window_before_s") ||
      !p.contains("window_after_s") || p.value("shape", std::string("window")) != "window")
    throw ConfigError(
        "{}: morphology_features need a codebook of beat windows (tokenizer beat-vq with shape "
        "window); this one says '{}'",
        path, metadata.substr(0, 80));
  const int points = p.at("points");
  const double before = p.at("window_before_s"), after = p.at("window_after_s");
  if (points != dim || points < 2 || before + after <= 0)
    throw ConfigError("{}: beat windows of {} points over {} s do not match the {} values per code",
                      path, points, before + after, dim);
  return beat_shape_layout(points, before, after);
}

namespace {

float log_distance(double distance, double size) {
  return float(std::log(distance / std::max(size, 1e-9) + 0.01));
}

// Element-wise median of the shapes of the beats in [lo, hi) with a shape and not left out;
// zeros when there are none.
void median_shape(const float* shapes, size_t dim, const std::vector<int64_t>& row,
                  const std::vector<bool>& left_out, size_t lo, size_t hi,
                  std::vector<float>& scratch, float* out) {
  for (size_t j = 0; j < dim; ++j) {
    scratch.clear();
    for (size_t k = lo; k < hi; ++k)
      if (row[k] >= 0 && !left_out[k]) scratch.push_back(shapes[size_t(row[k]) * dim + j]);
    if (scratch.empty()) {
      out[j] = 0.0f;
      continue;
    }
    const auto mid = scratch.begin() + ptrdiff_t(scratch.size() / 2);
    std::nth_element(scratch.begin(), mid, scratch.end());
    out[j] = *mid;
  }
}

// The q-quantile of v (reordered; v not empty).
double quantile(std::vector<double>& v, double q) {
  const auto at = v.begin() + ptrdiff_t(std::min(v.size() - 1, size_t(q * double(v.size()))));
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

}  // namespace

std::vector<bool> premature_beats(const std::vector<double>& rr) {
  const size_t n = rr.size();
  std::vector<bool> premature(n, false);
  std::vector<double> known;
  for (double v : rr)
    if (v > 0) known.push_back(v);
  if (known.empty()) return premature;
  const double record_median = quantile(known, 0.5);
  for (size_t i = 0; i < n; ++i) {
    if (!(rr[i] > 0)) continue;
    known.clear();
    const size_t lo = i >= size_t(kTemplateBeats) ? i - kTemplateBeats : 0;
    for (size_t k = lo; k < std::min(n, i + kTemplateBeats + 1); ++k)
      if (rr[k] > 0) known.push_back(rr[k]);
    const double reference = std::max(record_median, quantile(known, 0.75));
    premature[i] = rr[i] < kPrematureRatio * reference;
  }
  return premature;
}

std::vector<float> local_templates(const float* shapes, int points,
                                   const std::vector<int64_t>& row_of_beat,
                                   const std::vector<bool>& left_out) {
  const size_t n = row_of_beat.size(), dim = size_t(points);
  if (!left_out.empty() && left_out.size() != n)
    throw InternalError("local_templates: {} beats but {} marks of beats to leave out", n,
                        left_out.size());
  const std::vector<bool> none(n, false);
  const std::vector<bool>& marks = left_out.empty() ? none : left_out;
  // kept_before[k]: how many beats before k have a shape and are not left out.
  std::vector<size_t> kept_before(n + 1, 0);
  for (size_t k = 0; k < n; ++k)
    kept_before[k + 1] = kept_before[k] + (row_of_beat[k] >= 0 && !marks[k]);
  std::vector<float> templates(n * dim), scratch;
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = i >= size_t(kTemplateBeats) ? i - kTemplateBeats : 0;
    const size_t hi = std::min(n, i + kTemplateBeats + 1);
    const bool enough = kept_before[hi] - kept_before[lo] >= size_t(kMinTemplateShapes);
    median_shape(shapes, dim, row_of_beat, enough ? marks : none, lo, hi, scratch,
                 templates.data() + i * dim);
  }
  return templates;
}

std::vector<float> relative_morphology(const float* shapes, const BeatShapeLayout& layout,
                                       const std::vector<int64_t>& row_of_beat) {
  return relative_morphology(shapes, layout, row_of_beat,
                             local_templates(shapes, layout.points, row_of_beat));
}

std::vector<float> relative_morphology(const float* shapes, const BeatShapeLayout& layout,
                                       const std::vector<int64_t>& row_of_beat,
                                       const std::vector<float>& templates) {
  const size_t n = row_of_beat.size(), dim = size_t(layout.points);
  if (templates.size() != n * dim)
    throw InternalError("relative_morphology: {} template values for {} beats of {} points",
                        templates.size(), n, dim);
  std::vector<float> out(n * kMorphologyFeatureCount, 0.0f);
  const float typical_distance = float(std::log(0.01));
  for (size_t i = 0; i < n; ++i) {
    float* f = out.data() + i * kMorphologyFeatureCount;
    f[0] = f[3] = f[4] = typical_distance;
    f[1] = 1.0f;
  }
  std::vector<double> t(dim);
  for (size_t i = 0; i < n; ++i) {
    if (row_of_beat[i] < 0) continue;  // no shape: stays typical
    std::copy_n(templates.begin() + ptrdiff_t(i * dim), dim, t.begin());
    const float* c = shapes + size_t(row_of_beat[i]) * dim;
    double d_all = 0, d_qrs = 0, t_all = 0, t_qrs = 0;
    double c_min = c[0], c_max = c[0], t_min = t[0], t_max = t[0];
    for (size_t j = 0; j < dim; ++j) {
      const double d = (c[j] - t[j]) * (c[j] - t[j]), s = t[j] * t[j];
      const bool qrs = int(j) >= layout.qrs_first && int(j) < layout.qrs_end;
      d_all += d;
      t_all += s;
      if (qrs) d_qrs += d, t_qrs += s;
      c_min = std::min<double>(c_min, c[j]), c_max = std::max<double>(c_max, c[j]);
      t_min = std::min(t_min, t[j]), t_max = std::max(t_max, t[j]);
    }
    float* f = out.data() + i * kMorphologyFeatureCount;
    f[0] = log_distance(std::sqrt(d_all), std::sqrt(t_all));
    f[1] = float(dsp::pearson_correlation(c, t.data(), dim));
    f[2] = float(std::clamp(std::log(std::max(c_max - c_min, 1e-9) / std::max(t_max - t_min, 1e-9)),
                            -2.0, 2.0));
    f[3] = log_distance(std::sqrt(d_qrs), std::sqrt(t_qrs));
    f[4] = log_distance(std::sqrt(d_all - d_qrs), std::sqrt(t_all));
  }
  return out;
}

}  // namespace hlm
