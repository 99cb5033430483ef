// The forms of a record's premature beats, matched in its pauses (see qrs_ectopic_forms.h).
#include "dsp/qrs_ectopic_forms.h"

#include <cmath>

namespace hlm::dsp::qrs {

namespace {
float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0.0f;
  for (size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}
}  // namespace

void EctopicForms::add(std::vector<float> form) {
  if (form.empty() || dot(form, form) <= 0.0f) return;
  forms_.push_back(std::move(form));
  if (forms_.size() > kForms) forms_.pop_front();
}

bool EctopicForms::matches(const std::vector<std::vector<float>>& candidates) const {
  if (forms_.size() < kMatches) return false;
  std::vector<float> norms;
  for (const auto& c : candidates) norms.push_back(std::sqrt(dot(c, c)));
  size_t alike = 0;
  for (const std::vector<float>& form : forms_) {
    const float norm = std::sqrt(dot(form, form));
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (candidates[k].size() != form.size() || norms[k] <= 0.0f) continue;
      const float scale = norms[k] / norm;
      if (scale <= kScale && scale >= 1.0f / kScale &&
          dot(candidates[k], form) >= kSimilar * norms[k] * norm) {
        ++alike;
        break;
      }
    }
    if (alike >= kMatches) return true;
  }
  return false;
}

}  // namespace hlm::dsp::qrs
