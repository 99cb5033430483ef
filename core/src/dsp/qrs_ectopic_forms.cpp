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

float EctopicForms::similarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return -1.0f;
  const float na = std::sqrt(dot(a, a)), nb = std::sqrt(dot(b, b));
  if (na <= 0.0f || nb <= 0.0f) return -1.0f;
  const float scale = na / nb;
  if (scale > kScale || scale < 1.0f / kScale) return -1.0f;
  return dot(a, b) / (na * nb);
}

bool EctopicForms::matches(const std::vector<std::vector<float>>& candidates) const {
  if (forms_.size() < kMatches) return false;
  size_t alike_forms = 0;
  for (const std::vector<float>& form : forms_) {
    for (const std::vector<float>& c : candidates)
      if (alike(c, form)) {
        ++alike_forms;
        break;
      }
    if (alike_forms >= kMatches) return true;
  }
  return false;
}

}  // namespace hlm::dsp::qrs
