// The waves a pause holds beyond those that follow the regular beats (see qrs_pause_waves.h).
#include "dsp/qrs_pause_waves.h"

#include <algorithm>
#include <cmath>

#include "dsp/qrs_fusion.h"

namespace hlm::dsp::qrs {

namespace {
constexpr double kPeakSeconds = 0.06;  // a beat's amplitude: its largest |band| this near its R
}  // namespace

float PauseWaves::band_at(size_t lead, int64_t i) const {
  const std::vector<float>& band = leads_.slow[lead].band;
  if (band.empty()) return 0.0f;
  return band[std::min<size_t>(size_t(i / kSlowStretch), band.size() - 1)];
}

void PauseWaves::fit(const TemplateBeats& beats, int64_t length, size_t per_delay) {
  const size_t leads = leads_.slow.size();
  template_.assign(leads, {});
  amplitude_.assign(leads, 0.0f);
  length_ = length;
  const int64_t reach = std::llround(kPeakSeconds * kRateHz);
  for (size_t k = 0; k < leads; ++k) {
    if (leads_.slow[k].band.empty()) continue;
    column_.clear();
    for (size_t j = 0; j < std::min(per_delay, beats.starts.size()); ++j) {
      const int64_t r = beats.starts[j];
      float top = 0.0f;
      for (int64_t i = std::max<int64_t>(0, r - reach); i <= r + reach; ++i)
        top = std::max(top, std::fabs(band_at(k, i)));
      column_.push_back(top);
    }
    amplitude_[k] = column_.empty() ? 0.0f : median_in_place(column_.data(), column_.size());
    for (int64_t d = 0; d < length; ++d) {
      if (!beats.column(
              d, per_delay, [&](int64_t i) { return band_at(k, i); }, column_)) {
        length_ = std::min(length_, d);
        break;
      }
      template_[k].push_back(median_in_place(column_.data(), column_.size()));
    }
  }
}

int64_t PauseWaves::template_delay(int64_t delay, float stretch) const {
  return std::min<int64_t>(std::lround(float(delay) / stretch), length_ - 1);
}

float PauseWaves::weight_at(size_t lead, int64_t i, int64_t d) const {
  if (d < 0 || amplitude_[lead] <= 0.0f || int64_t(template_[lead].size()) <= d) return 0.0f;
  if (lead >= leads_.weight.size() || leads_.weight[lead].empty()) return 0.0f;
  const std::vector<float>& w = leads_.weight[lead];
  return w[std::min<size_t>(size_t(i / kBlock), w.size() - 1)];
}

float PauseWaves::residual(int64_t i, int64_t delay, float stretch) const {
  const int64_t d = template_delay(delay, stretch);
  float sum = 0.0f, weights = 0.0f;
  for (size_t k = 0; k < template_.size(); ++k) {
    const float weight = weight_at(k, i, d);
    if (weight <= 0.0f) continue;
    sum += weight * std::fabs(band_at(k, i) - template_[k][size_t(d)]) / amplitude_[k];
    weights += weight;
  }
  return weights > 0.0f ? sum / weights : 0.0f;
}

void PauseWaves::differences(int64_t i, int64_t delay, float stretch,
                             std::vector<float>& out) const {
  const int64_t d = template_delay(delay, stretch);
  // Each lead's share of the weights there, as residual() weighs it: the weights are a lead's
  // quality in its block, which changes along the record, and a form's size must not.
  float weights = 0.0f;
  for (size_t k = 0; k < template_.size(); ++k) weights += weight_at(k, i, d);
  for (size_t k = 0; k < template_.size(); ++k) {
    const float weight = weight_at(k, i, d);
    out.push_back(weight > 0.0f
                      ? weight / weights * (band_at(k, i) - template_[k][size_t(d)]) / amplitude_[k]
                      : 0.0f);
  }
}

}  // namespace hlm::dsp::qrs
