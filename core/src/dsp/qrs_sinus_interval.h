// The sinus interval the QRS detector's pause search (qrs_pause_search.h) follows along the
// beats, and what it calls premature and a pause.
#pragma once
#include <bitset>

#include "dsp/qrs_recent.h"

namespace hlm::dsp::qrs {

// The sinus interval along the beats, causally: the median of the last 8 intervals within
// kPremature-kSinusHigh of it, not after a premature beat, and of the halves of the spans
// around premature beats (see_around_premature). kRateChange premature beats, intervals of
// kSinusHigh-kPause of it, or unexplained pauses in a row set a new one (a faster rhythm; a
// slower one; a rate that halved, or 2:1 AV block); the pause after a premature beat never moves
// it alone. Until a sinus interval confirms it, short spans around premature beats set it too.
class SinusInterval {
 public:
  static constexpr float kPause = 1.5f;       // a pause: this many sinus intervals or more
  static constexpr float kPremature = 0.85f;  // a premature beat: sooner than this share of one
  static constexpr float kSinusHigh = 1.3f;   // longer than this share: not a sinus interval
  static constexpr int kRateChange = 8;       // unexplained pauses in a row that set a new interval
  static constexpr int kHalved = 7;           // of the last 8 spans around premature beats

  explicit SinusInterval(float first) { reset(first); }
  float value() const { return ring_.median(); }
  // The interval when a sinus interval first bore it out (confirm), 0 before: the one it started
  // from on most records, the one the short spans below set where they corrected that first.
  float first_confirmed() const { return first_confirmed_; }
  // The span from the beat before a premature beat to the beat after it: two sinus intervals
  // after a full compensatory pause (a ventricular beat leaves the sinus node's pace alone), the
  // one measure of the sinus interval bigeminy shows. A span of about one sinus interval is an
  // interpolated beat, rare many times in a row: when kHalved of the last 8 spans are, the
  // interval is twice the sinus one (bigeminy whose premature beats the first intervals hid, some
  // found since), and the half of the last sets a new one. A span `in_a_run` (the beat after came
  // as soon again, within kPremature either way: every beat of a run but its last, two coupling
  // intervals, and a premature beat midway between its neighbours) does not count as one there:
  // where runs are frequent, their spans halved a right interval. While no sinus interval has
  // confirmed the interval since it was last set (by the constructor or any rule here), kHalved of
  // the last 8 spans between 1.3 and 1.7 intervals (kSinusHigh, twice kPremature) say it is too
  // long: premature beats whose compensatory pauses all end early, as where bigeminy's missed
  // beats made the first intervals long; the half of the last sets a new one. A confirmed interval
  // stands (in atrial fibrillation, spans around the irregular beats say nothing of it).
  void see_around_premature(float span, bool in_a_run = false) {
    const float r = 0.5f * span / value();
    if (r >= kPremature && r <= kSinusHigh) push(0.5f * span);
    const bool one = !in_a_run && 2.0f * r >= kPremature && 2.0f * r <= kSinusHigh;
    const bool short_span = 2.0f * r > kSinusHigh && r < kPremature;
    spans_ <<= 1;
    spans_[0] = one;
    short_spans_ <<= 1;
    short_spans_[0] = short_span;
    if (one && int(spans_.count()) >= kHalved) reset(0.5f * span);
    if (!confirmed_ && short_span && int(short_spans_.count()) >= kHalved) reset(0.5f * span);
  }
  void see(float interval, bool after_premature) {
    const float r = interval / value();
    if (r < kPremature) {
      longs_ = 0;  // a premature beat: the long gaps around it may hide others
      if (++shorts_ >= kRateChange) reset(interval);
      return;
    }
    shorts_ = 0;
    if (after_premature) return;
    if (r <= kSinusHigh) {
      pauses_ = longs_ = 0;
      push(interval);
      confirm();
    } else if (r < kPause) {
      if (++longs_ >= kRateChange) reset(interval);
    } else if (++pauses_ >= kRateChange) {
      reset(interval);
    }
  }

 private:
  void reset(float x) {
    ring_ = Recent<float>(x);
    pauses_ = shorts_ = longs_ = 0;
    spans_.reset();
    short_spans_.reset();
    confirmed_ = false;
  }
  void push(float x) { ring_.push(x); }
  // A sinus interval between two beats, neither premature, bore out the interval.
  void confirm() {
    confirmed_ = true;
    if (first_confirmed_ == 0.0f) first_confirmed_ = value();
  }
  Recent<float> ring_{0.0f};
  int pauses_ = 0, shorts_ = 0, longs_ = 0;
  std::bitset<8> spans_;  // the last 8 spans around premature beats: set where about one interval
  std::bitset<8> short_spans_;  // and where 1.3-1.7 intervals (see_around_premature)
  bool confirmed_ = false;      // a sinus interval bore it out since the last reset
  float first_confirmed_ = 0.0f;
};

}  // namespace hlm::dsp::qrs
