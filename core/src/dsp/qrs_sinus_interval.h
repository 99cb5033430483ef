// The sinus interval the QRS detector's pause search (qrs_pause_search.h) follows along the
// beats, and what it calls premature and a pause.
#pragma once
#include "dsp/qrs_recent.h"

namespace hlm::dsp::qrs {

// The sinus interval along the beats, causally: the median of the last 8 intervals within
// kPremature-kSinusHigh of it, not after a premature beat. kRateChange premature beats or
// unexplained pauses in a row set a new one (a faster rhythm; a rate that halved, or 2:1 AV
// block); the pause after a premature beat never moves it.
class SinusInterval {
 public:
  static constexpr float kPause = 1.5f;       // a pause: this many sinus intervals or more
  static constexpr float kPremature = 0.85f;  // a premature beat: sooner than this share of one
  static constexpr float kSinusHigh = 1.3f;   // longer than this share: not a sinus interval
  static constexpr int kRateChange = 8;       // unexplained pauses in a row that set a new interval

  explicit SinusInterval(float first) { reset(first); }
  float value() const { return ring_.median(); }
  void see(float interval, bool after_premature) {
    const float r = interval / value();
    if (r < kPremature) {
      if (++shorts_ >= kRateChange) reset(interval);
      return;
    }
    shorts_ = 0;
    if (after_premature) return;
    if (r <= kSinusHigh) {
      pauses_ = 0;
      push(interval);
    } else if (r >= kPause && ++pauses_ >= kRateChange) {
      reset(interval);
    }
  }

 private:
  void reset(float x) {
    ring_ = Recent<float>(x);
    pauses_ = shorts_ = 0;
  }
  void push(float x) { ring_.push(x); }
  Recent<float> ring_{0.0f};
  int pauses_ = 0, shorts_ = 0;
};

}  // namespace hlm::dsp::qrs
