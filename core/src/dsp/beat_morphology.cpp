// Beat shapes against their record's template (see beat_morphology.h).
#include "hlm/dsp/beat_morphology.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// The element-wise median of the shapes of a window of beats that slides along a record: each
// point's values kept sorted, so a beat entering or leaving costs a binary search and a short
// move instead of a selection over the whole window for every beat. The median is the value
// at index size / 2 of the sorted values, as std::nth_element picks it.
class SlidingMedian {
 public:
  // Every point's sorted values in one block of `stride_` floats, room for the 2 kTemplateBeats
  // + 1 beats a window holds (more only if a NaN kept a value from being found and removed).
  SlidingMedian(const float* shapes, size_t dim, const std::vector<int64_t>& row)
      : shapes_(shapes), dim_(dim), row_(row), sorted_(dim * stride_), size_(dim, 0) {}

  // Beat k's shape in (true) or out (false) of the window; beats without a shape are never in.
  void change(size_t k, bool in) {
    if (row_[k] < 0) return;
    const float* shape = shapes_ + size_t(row_[k]) * dim_;
    for (size_t j = 0; j < dim_; ++j) {
      if (in && size_[j] == stride_) grow();
      float* v = sorted_.data() + j * stride_;
      size_t& size = size_[j];
      if (in) {
        float* at = std::upper_bound(v, v + size, shape[j]);
        std::memmove(at + 1, at, sizeof(float) * size_t(v + size - at));
        *at = shape[j];
        ++size;
      } else {
        size -= remove(v, size, shape[j]);
      }
    }
  }

  void clear() { std::fill(size_.begin(), size_.end(), size_t(0)); }

 private:
  void grow() {
    std::vector<float> wider(dim_ * 2 * stride_);
    for (size_t j = 0; j < dim_; ++j)
      std::copy_n(sorted_.begin() + ptrdiff_t(j * stride_), size_[j],
                  wider.begin() + ptrdiff_t(j * 2 * stride_));
    sorted_.swap(wider);
    stride_ *= 2;
  }

  // One copy of x out of v[0, size), if there is one (returns whether); a NaN, which no search
  // can place, is looked for one by one.
  static bool remove(float* v, size_t size, float x) {
    float* end = v + size;
    float* it = std::lower_bound(v, end, x);
    if (it == end || !(*it == x))
      it = std::find_if(v, end, [x](float y) { return std::isnan(x) && std::isnan(y); });
    if (it == end) return false;
    std::memmove(it, it + 1, sizeof(float) * size_t(end - it - 1));
    return true;
  }

 public:
  // The median of each point over the beats in the window; zeros when there are none.
  void write(float* out) const {
    for (size_t j = 0; j < dim_; ++j)
      out[j] = size_[j] == 0 ? 0.0f : sorted_[j * stride_ + size_[j] / 2];
  }

 private:
  const float* shapes_;
  size_t dim_;
  const std::vector<int64_t>& row_;
  size_t stride_ = 2 * size_t(kTemplateBeats) + 1;
  std::vector<float> sorted_;  // point j's values in [j stride_, j stride_ + size_[j])
  std::vector<size_t> size_;
};

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
  // The window [lo, hi) slides right; while whether enough beats remain to leave the marked
  // ones out stays the same, beats only enter on the right and leave on the left.
  std::vector<float> templates(n * dim);
  SlidingMedian window(shapes, dim, row_of_beat);
  size_t lo = 0, hi = 0;
  int mode = -1;  // 1: marked beats left out, 0: every beat with a shape, -1: nothing yet
  const auto counts = [&](size_t k) { return mode == 0 || !marks[k]; };
  for (size_t i = 0; i < n; ++i) {
    const size_t new_lo = i >= size_t(kTemplateBeats) ? i - kTemplateBeats : 0;
    const size_t new_hi = std::min(n, i + kTemplateBeats + 1);
    const int new_mode =
        kept_before[new_hi] - kept_before[new_lo] >= size_t(kMinTemplateShapes) ? 1 : 0;
    if (new_mode != mode) {  // the whole window again
      window.clear();
      mode = new_mode;
      lo = hi = new_lo;
    }
    for (; lo < new_lo; ++lo)
      if (counts(lo)) window.change(lo, false);
    for (; hi < new_hi; ++hi)
      if (counts(hi)) window.change(hi, true);
    window.write(templates.data() + i * dim);
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
