// Beat shapes against their record's template (see beat_morphology.h).
#include "hlm/dsp/beat_morphology.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "dsp/pearson.h"
#include "hlm/errors.h"
#include "util/target_clones.h"

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

// Where x goes among the sorted values v[0, size), counted rather than searched: how many are
// not above it (std::upper_bound's place, after equal values), and how many are below it
// (std::lower_bound's, the first copy of x). A binary search's branches, one mispredicted in
// two, cost more than reading a window's hundred values in vector lanes. The counts are the
// searches' places only while v is in order: not after a NaN, which no order places, has
// entered (the searches then place other values out of order too, even once it has left).
HLM_VECTOR_CLONES
unsigned count_not_above(const float* v, unsigned size, float x) {
  unsigned c = 0;
  for (unsigned i = 0; i < size; ++i) c += !(x < v[i]);
  return c;
}

HLM_VECTOR_CLONES
unsigned count_below(const float* v, unsigned size, float x) {
  unsigned c = 0;
  for (unsigned i = 0; i < size; ++i) c += v[i] < x;
  return c;
}

// The element-wise median of the shapes of a window of beats that slides along a record: each
// point's values kept sorted, so a beat entering or leaving costs a count and a short move
// instead of a selection over the whole window for every beat. The median is the value
// at index size / 2 of the sorted values, as std::nth_element picks it.
class SlidingMedian {
 public:
  // Every point's sorted values in one block of `stride_` floats, room for the 2 kTemplateBeats
  // + 1 beats a window holds (more only if a NaN kept a value from being found and removed).
  SlidingMedian(const float* shapes, size_t dim, const std::vector<int64_t>& row)
      : shapes_(shapes),
        dim_(dim),
        row_(row),
        sorted_(dim * stride_),
        size_(dim, 0),
        searched_(dim, false) {}

  // Beat k's shape in (true) or out (false) of the window; beats without a shape are never in.
  void change(size_t k, bool in) {
    if (row_[k] < 0) return;
    const float* shape = shapes_ + size_t(row_[k]) * dim_;
    for (size_t j = 0; j < dim_; ++j) {
      if (in && size_[j] == stride_) grow();
      float* v = sorted_.data() + j * stride_;
      size_t& size = size_[j];
      const float x = shape[j];
      if (in) {
        float* at = searched_[j] ? std::upper_bound(v, v + size, x)
                                 : v + count_not_above(v, unsigned(size), x);
        std::memmove(at + 1, at, sizeof(float) * size_t(v + size - at));
        *at = x;
        ++size;
        searched_[j] = searched_[j] || std::isnan(x);
      } else {
        float* it =
            searched_[j] ? std::lower_bound(v, v + size, x) : v + count_below(v, unsigned(size), x);
        if (it != v + size && *it == x) {
          remove_at(v, size, it);
        } else if (std::isnan(x)) {  // a NaN, which no search can place
          float* nan = std::find_if(v, v + size, [](float y) { return std::isnan(y); });
          if (nan != v + size) remove_at(v, size, nan);
        }
      }
    }
  }

  void clear() {
    std::fill(size_.begin(), size_.end(), size_t(0));
    std::fill(searched_.begin(), searched_.end(), false);
  }

 private:
  void grow() {
    std::vector<float> wider(dim_ * 2 * stride_);
    for (size_t j = 0; j < dim_; ++j)
      std::copy_n(sorted_.begin() + ptrdiff_t(j * stride_), size_[j],
                  wider.begin() + ptrdiff_t(j * 2 * stride_));
    sorted_.swap(wider);
    stride_ *= 2;
  }

  static void remove_at(float* v, size_t& size, float* it) {
    std::memmove(it, it + 1, sizeof(float) * size_t(v + size - it - 1));
    --size;
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
  // Whether a NaN has entered point j's values since the window was last cleared: from then on
  // its places are searched, as before counting, so every value lands where it did.
  std::vector<bool> searched_;
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
  // The known intervals of the beats within kTemplateBeats either side, kept sorted as the
  // window slides (a value enters on the right, one leaves on the left), so each beat's 75th
  // percentile is read at its place rather than selected again.
  std::vector<double>& window = known;
  window.clear();
  size_t lo = 0, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const size_t end = std::min(n, i + kTemplateBeats + 1); hi < end; ++hi)
      if (rr[hi] > 0) window.insert(std::upper_bound(window.begin(), window.end(), rr[hi]), rr[hi]);
    for (; lo + size_t(kTemplateBeats) < i; ++lo)
      if (rr[lo] > 0) window.erase(std::lower_bound(window.begin(), window.end(), rr[lo]));
    if (!(rr[i] > 0)) continue;
    const size_t at = std::min(window.size() - 1, size_t(0.75 * double(window.size())));
    const double reference = std::max(record_median, window[at]);
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
