// The pause search's second view (qrs_pause_search.h): the waves themselves, not their energy.
// A small wide ventricular beat on the T wave's tail barely moves the envelopes, whose sum is
// not the sum of the waves; subtracted from the T wave sample by sample, it stands clear.
#pragma once
#include <cstdint>
#include <vector>

#include "dsp/qrs_envelope.h"

namespace hlm::dsp::qrs {

// Each lead's signed slow band (LeadEnvelope::band, at kRateHz / kSlowStretch) and its weight per
// block of the main band (qrs_fusion.h), as the detector fused the slow envelopes.
struct LeadWaves {
  const std::vector<LeadEnvelope>& slow;
  const std::vector<std::vector<float>>& weight;
};

// The fewest regular beats a template is made of at any delay after the R peak: the median of
// one or two beats follows an odd one. The pause search needs as many before it searches.
constexpr size_t kMinTemplateBeats = 3;

// The regular beats a template is made of, newest first: each one's R peak (a main-band sample)
// and the sample it is read up to (not included).
struct TemplateBeats {
  std::vector<int64_t> starts, stops;

  // Fills `out` with read(start + d) for the first `per_delay` beats read past delay d; true
  // when kMinTemplateBeats or more are.
  template <class Read>
  bool column(int64_t d, size_t per_delay, Read read, std::vector<float>& out) const {
    out.clear();
    for (size_t j = 0; j < starts.size() && out.size() < per_delay; ++j)
      if (starts[j] + d < stops[j]) out.push_back(read(starts[j] + d));
    return out.size() >= kMinTemplateBeats;
  }
};

// What a stretch after a beat holds beyond the waves that follow the regular beats: per lead,
// |band - the median of the regular beats' band at the same delay after their R peaks|, over
// the lead's beat amplitude (the median of the regular beats' largest |band| within 60 ms of
// their R peak), averaged with the leads' weights. Delays past the template's end read its last
// sample, as the envelopes' expectation does.
class PauseWaves {
 public:
  explicit PauseWaves(LeadWaves leads) : leads_(leads) {}

  // The template, from the first `per_delay` of `beats` read that far, for delays up to `length`
  // (fewer where under 3 beats reach one). The amplitudes: the first `per_delay` beats.
  void fit(const TemplateBeats& beats, int64_t length, size_t per_delay);
  // Delays the template covers.
  int64_t length() const { return length_; }
  // The residual at main-band sample i, `delay` samples after a beat, against the template
  // stretched in time by `stretch` (0 where the template holds nothing).
  float residual(int64_t i, int64_t delay, float stretch) const;
  // Each lead's band minus the template at main-band sample i, `delay` samples after a beat,
  // over the lead's beat amplitude and times its share of the leads' weights there (as
  // residual() weighs it), appended to `out` (0 for a lead the template or the weights do not
  // hold).
  void differences(int64_t i, int64_t delay, float stretch, std::vector<float>& out) const;

 private:
  float band_at(size_t lead, int64_t i) const;
  // The template's delay for `delay` samples after a beat, stretched by `stretch` (held at its
  // last delay beyond it; negative when the template is empty).
  int64_t template_delay(int64_t delay, float stretch) const;
  // The lead's weight at main-band sample i, 0 where the template holds nothing at delay d
  // (or the lead has no amplitude or no weights).
  float weight_at(size_t lead, int64_t i, int64_t d) const;
  const LeadWaves leads_;
  int64_t length_ = 0;
  std::vector<std::vector<float>> template_;  // per lead, per delay
  std::vector<float> amplitude_;              // per lead
  std::vector<float> column_;
};

}  // namespace hlm::dsp::qrs
