// Scoring beat detections against reference annotations the way WFDB's bxb does (one-to-one
// matches within a window, 150 ms by default), and labelling detected beats with the AAMI
// class of the reference beat they match.
#pragma once
#include <cstdint>
#include <vector>

#include "hlm/ecg.h"

namespace hlm::dsp {

struct MatchCounts {
  int64_t tp = 0;  // reference beats with a detection within the window
  int64_t fn = 0;  // reference beats without one
  int64_t fp = 0;  // detections without a reference beat
  double sensitivity() const { return tp + fn ? double(tp) / double(tp + fn) : 1.0; }
  double positive_predictivity() const { return tp + fp ? double(tp) / double(tp + fp) : 1.0; }
  MatchCounts& operator+=(const MatchCounts& o) {
    tp += o.tp, fn += o.fn, fp += o.fp;
    return *this;
  }
};

// The match window in samples (150 ms by default), rounded.
int64_t match_window_samples(double sampling_hz, double window_seconds = 0.150);

// Sample positions of the annotations that are beats (hlm::is_beat_code), in order.
std::vector<int64_t> reference_beats(const std::vector<Annotation>& annotations);

// For each detection (sorted), the index of the reference beat (sorted) it is paired with, or
// -1. Pairs are one-to-one and at most window_samples apart; when two candidates compete the
// closer pair wins, as in bxb.
std::vector<int64_t> pair_beats(const std::vector<int64_t>& reference,
                                const std::vector<int64_t>& detected, int64_t window_samples);

// TP, FN and FP of the pairing above.
MatchCounts match_beats(const std::vector<int64_t>& reference, const std::vector<int64_t>& detected,
                        int64_t window_samples);

// The beat-by-beat comparison of AAMI EC57 (WFDB's bxb) over a whole record: no comparison is
// made inside an episode of ventricular flutter or fibrillation, from a VFON annotation ('[')
// to the next VFOFF (']'), both included (one without VFOFF runs to the record's end). The
// reference beats there (flutter waves '!') are not scored, nor is a detection there that pairs
// with no scored reference beat. Records without such episodes score as match_beats.
struct BeatComparison {
  MatchCounts counts;
  std::vector<size_t> missed;           // indices into the annotations: scored beats not found
  std::vector<int64_t> false_detected;  // samples of the scored detections paired with none
  int64_t vf_reference = 0;             // reference beats left out inside VF episodes
  int64_t vf_detected = 0;              // detections left out inside them (paired with none)
};
BeatComparison compare_beats(const std::vector<Annotation>& annotations,
                             const std::vector<int64_t>& detected, int64_t window_samples);

// For each detection, the AAMI class (hlm::aami_class, as uint8_t) of the reference beat
// annotation it pairs with, or BeatClass::kNone. Non-beat annotations are ignored.
std::vector<uint8_t> label_beats(const std::vector<int64_t>& detected,
                                 const std::vector<Annotation>& annotations,
                                 int64_t window_samples);

}  // namespace hlm::dsp
