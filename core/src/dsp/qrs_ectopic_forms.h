// The pause search's third view (qrs_pause_search.h): the forms of the premature beats a record
// has already shown. A wave in a pause that stands clear of the regular beats' waves but adds
// nothing to the slow envelope (an inverted ventricular beat on an upright T wave takes away
// from the envelope what it adds to the waves) is also what a T wave that merely moved does; only
// the first looks like beats the record has had before.
#pragma once
#include <cstddef>
#include <deque>
#include <vector>

namespace hlm::dsp::qrs {

// A beat's form: what its waves hold beyond the regular beats' own over kFormSeconds either side
// of its R peak, the leads side by side (PauseWaves::differences), read every kSlowStretch
// main-band samples.
constexpr double kFormSeconds = 0.1;  // a wide ventricular complex whole

class EctopicForms {
 public:
  // Keeps a premature beat's form: the newest kForms.
  void add(std::vector<float> form);
  // Whether any of `candidates` (one wave's form read at several places about its peak: the
  // peak of what stands above the regular beats' waves is not the R peak) has the form of
  // kMatches of the beats kept: a similarity (cosine) of kSimilar or more, at kScale times
  // their size or less either way.
  bool matches(const std::vector<std::vector<float>>& candidates) const;
  void clear() { forms_.clear(); }
  // How alike two forms are: their cosine where they are at most kScale times the size of each
  // other either way, else -1.
  static float similarity(const std::vector<float>& a, const std::vector<float>& b);
  // Whether two forms are alike: a similarity of `similar` or more.
  static bool alike(const std::vector<float>& a, const std::vector<float>& b,
                    float similar = kSimilar) {
    return similarity(a, b) >= similar;
  }

  static constexpr size_t kForms = 32;
  static constexpr size_t kMatches = 2;
  static constexpr float kSimilar = 0.9f;
  static constexpr float kScale = 2.5f;

 private:
  std::deque<std::vector<float>> forms_;  // oldest first
};

}  // namespace hlm::dsp::qrs
