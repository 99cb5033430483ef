// bxb-style one-to-one beat matching and label transfer (see hlm/dsp/beat_match.h).
#include "hlm/dsp/beat_match.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace hlm::dsp {

int64_t match_window_samples(double sampling_hz, double window_seconds) {
  return static_cast<int64_t>(std::llround(window_seconds * sampling_hz));
}

std::vector<int64_t> reference_beats(const std::vector<Annotation>& annotations) {
  std::vector<int64_t> out;
  for (const Annotation& a : annotations)
    if (is_beat_code(a.code)) out.push_back(a.sample);
  return out;
}

std::vector<int64_t> pair_beats(const std::vector<int64_t>& reference,
                                const std::vector<int64_t>& detected, int64_t window_samples) {
  std::vector<int64_t> pair(detected.size(), -1);
  size_t i = 0, j = 0;
  while (i < reference.size() && j < detected.size()) {
    const int64_t r = reference[i], d = detected[j];
    if (d < r - window_samples) {
      ++j;  // detection too early for any remaining reference beat: a false positive
    } else if (d > r + window_samples) {
      ++i;  // reference beat with no detection left near it: a false negative
    } else if (j + 1 < detected.size() && std::llabs(detected[j + 1] - r) < std::llabs(d - r)) {
      ++j;  // the next detection is closer to this reference beat
    } else if (i + 1 < reference.size() && std::llabs(reference[i + 1] - d) < std::llabs(d - r)) {
      ++i;  // this detection belongs to the next reference beat
    } else {
      pair[j] = static_cast<int64_t>(i);
      ++i, ++j;
    }
  }
  return pair;
}

MatchCounts match_beats(const std::vector<int64_t>& reference, const std::vector<int64_t>& detected,
                        int64_t window_samples) {
  MatchCounts c;
  for (int64_t p : pair_beats(reference, detected, window_samples)) c.tp += p >= 0;
  c.fn = static_cast<int64_t>(reference.size()) - c.tp;
  c.fp = static_cast<int64_t>(detected.size()) - c.tp;
  return c;
}

namespace {

constexpr uint8_t kVfOn = 32, kVfOff = 33;  // WFDB's VFON '[' and VFOFF ']'

struct Episode {
  int64_t from = 0, to = 0;  // both included
};

std::vector<Episode> vf_episodes(const std::vector<Annotation>& annotations) {
  std::vector<Episode> out;
  bool open = false;
  for (const Annotation& a : annotations) {
    if (a.code == kVfOn && !open) {
      out.push_back({a.sample, INT64_MAX});
      open = true;
    } else if (a.code == kVfOff && open) {
      out.back().to = a.sample;
      open = false;
    }
  }
  return out;
}

bool inside(const std::vector<Episode>& episodes, int64_t sample) {
  for (const Episode& e : episodes)
    if (e.from <= sample && sample <= e.to) return true;
  return false;
}

}  // namespace

BeatComparison compare_beats(const std::vector<Annotation>& annotations,
                             const std::vector<int64_t>& detected, int64_t window_samples) {
  const std::vector<Episode> episodes = vf_episodes(annotations);
  BeatComparison out;
  std::vector<int64_t> reference;
  std::vector<size_t> index;  // of each scored reference beat in `annotations`
  for (size_t i = 0; i < annotations.size(); ++i) {
    if (!is_beat_code(annotations[i].code)) continue;
    if (inside(episodes, annotations[i].sample)) {
      ++out.vf_reference;
      continue;
    }
    reference.push_back(annotations[i].sample);
    index.push_back(i);
  }
  const std::vector<int64_t> pair = pair_beats(reference, detected, window_samples);
  std::vector<bool> found(reference.size(), false);
  for (size_t j = 0; j < detected.size(); ++j) {
    if (pair[j] >= 0) {
      found[size_t(pair[j])] = true;
      ++out.counts.tp;
    } else if (inside(episodes, detected[j])) {
      ++out.vf_detected;
    } else {
      out.false_detected.push_back(detected[j]);
    }
  }
  for (size_t i = 0; i < reference.size(); ++i)
    if (!found[i]) out.missed.push_back(index[i]);
  out.counts.fn = int64_t(out.missed.size());
  out.counts.fp = int64_t(out.false_detected.size());
  return out;
}

std::vector<uint8_t> label_beats(const std::vector<int64_t>& detected,
                                 const std::vector<Annotation>& annotations,
                                 int64_t window_samples) {
  std::vector<int64_t> samples;
  std::vector<uint8_t> classes;
  for (const Annotation& a : annotations) {
    if (!is_beat_code(a.code)) continue;
    samples.push_back(a.sample);
    classes.push_back(static_cast<uint8_t>(aami_class(a.code)));
  }
  std::vector<uint8_t> labels(detected.size(), static_cast<uint8_t>(BeatClass::kNone));
  const std::vector<int64_t> pair = pair_beats(samples, detected, window_samples);
  for (size_t j = 0; j < pair.size(); ++j)
    if (pair[j] >= 0) labels[j] = classes[static_cast<size_t>(pair[j])];
  return labels;
}

}  // namespace hlm::dsp
