// Beats missed inside pauses, found against the regular beats' own waves (see
// qrs_pause_search.h).
#include "dsp/qrs_pause_search.h"

#include <algorithm>
#include <cmath>

#include "dsp/qrs_recent.h"

namespace hlm::dsp::qrs {

namespace {
constexpr float kPause = 1.5f;        // a pause: this many sinus intervals or more
constexpr float kPremature = 0.85f;   // a premature beat: sooner than this share of one
constexpr float kSinusHigh = 1.3f;    // longer than this share: not a sinus interval
constexpr int kRateChange = 8;        // unexplained pauses in a row that set a new sinus interval
constexpr int kTemplateBeats = 15;    // beats the expectation after a beat is made of
constexpr double kFromSeconds = 0.2;  // the search starts this long after a beat
constexpr double kBeforeNextSeconds = 0.3;  // and stops this long before the next one
// A beat found in a pause: what stands above the expectation in the main band is more than
// kMainFloor of the beats' height and kOverNoise times what the regular beats leave
// unexplained, more than kSlowFloor of the beat level in the slow band (a blocked P wave is not),
// and it dips to kDip of its peak or less before it (a separate wave, not a tail the expectation
// misses from the window's start, as after a run of faster beats with other waves).
constexpr float kMainFloor = 0.06f;
constexpr float kOverNoise = 3.0f;
constexpr float kSlowFloor = 0.15f;
constexpr float kDip = 0.5f;

float median(std::vector<float>& v) { return median_in_place(v.data(), v.size()); }

// The sinus interval along the beats, causally: the median of the last 8 intervals within
// kPremature-kSinusHigh of it, not after a premature beat. kRateChange premature beats or
// unexplained pauses in a row set a new one (a faster rhythm; a rate that halved, or 2:1 AV
// block); the pause after a premature beat never moves it.
class SinusInterval {
 public:
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

// Walks the beats in order, keeping the sinus interval and the last regular beats (not
// premature, no pause after them), and searches each pause after a beat that was not premature.
class PauseSearch {
 public:
  PauseSearch(const std::vector<Candidate>& beats, const Envelopes& env, float first_interval)
      : beats_(beats), env_(env), m_(int64_t(env.main.size())), sinus_(first_interval) {}

  std::vector<Candidate> run() {
    for (const Candidate& b : beats_) {
      if (!out_.empty() && !premature_.back() &&
          float(b.i - out_.back().i) >= kPause * sinus_.value()) {
        Candidate found;
        if (search(out_.back(), b, found)) add(found);
      }
      add(b);
    }
    return std::move(out_);
  }

 private:
  void add(const Candidate& c) {
    bool premature = false;
    if (!out_.empty()) {
      const float interval = float(c.i - out_.back().i);
      premature = interval < kPremature * sinus_.value();
      const bool pause = interval >= kPause * sinus_.value();
      if (!premature_.back() && !pause) regular_.push_back(out_.size() - 1);
      if (regular_.size() > size_t(kTemplateBeats)) regular_.erase(regular_.begin());
      sinus_.see(interval, premature_.back());
    }
    out_.push_back(c);
    premature_.push_back(premature);
  }

  // The envelopes expected after a beat, sample by sample from its R peak: the medians of the
  // regular beats that cover each sample (up to kBeforeNextSeconds before their next beat; 3 at
  // least), up to `end` samples.
  void expectation(int64_t end) {
    const int64_t before_next = std::llround(kBeforeNextSeconds * kRateHz);
    expect_.clear();
    expect_slow_.clear();
    for (int64_t d = 0; d < end; ++d) {
      column_.clear();
      column_slow_.clear();
      for (const size_t j : regular_) {
        const int64_t i = out_[j].i + d;
        if (i < out_[j + 1].i - before_next && i < m_)
          column_.push_back(env_.main[i]), column_slow_.push_back(env_.slow[i]);
      }
      if (column_.size() < 3) break;
      expect_.push_back(median(column_));
      expect_slow_.push_back(median(column_slow_));
    }
  }

  // What the regular beats leave unexplained themselves: the 90th percentile of each one's
  // highest point above the expectation, from kFromSeconds on; and their median height.
  std::pair<float, float> noise_and_level() {
    const int64_t from = std::llround(kFromSeconds * kRateHz);
    const int64_t before_next = std::llround(kBeforeNextSeconds * kRateHz);
    std::vector<float> noise, heights;
    for (const size_t j : regular_) {
      float top = 0.0f;
      const int64_t stop =
          std::min<int64_t>(out_[j + 1].i - before_next - out_[j].i, int64_t(expect_.size()));
      for (int64_t d = from; d < stop && out_[j].i + d < m_; ++d)
        top = std::max(top, env_.main[out_[j].i + d] - expect_[d]);
      noise.push_back(top);
      heights.push_back(out_[j].height);
    }
    return {percentile_in_place(noise.data(), noise.size(), 0.9f), median(heights)};
  }

  // The highest unexplained point between `last` and `next`, if it is a beat.
  bool search(const Candidate& last, const Candidate& next, Candidate& found) {
    if (regular_.size() < 3) return false;
    const int64_t from = std::llround(kFromSeconds * kRateHz);
    const int64_t end = std::min<int64_t>(next.i - std::llround(kBeforeNextSeconds * kRateHz), m_);
    expectation(end - last.i);
    if (int64_t(expect_.size()) <= from) return false;
    // Sample i's height above the expectation, held at its last sample beyond it.
    auto at = [&](int64_t i) { return std::min<size_t>(size_t(i - last.i), expect_.size() - 1); };
    float best = 0.0f;
    int64_t best_i = -1;
    for (int64_t i = last.i + from; i < end; ++i)
      if (env_.main[i] - expect_[at(i)] > best) best = env_.main[i] - expect_[at(i)], best_i = i;
    float valley = best;
    for (int64_t i = last.i + from; i < best_i; ++i)
      valley = std::min(valley, env_.main[i] - expect_[at(i)]);
    if (valley > kDip * best) return false;
    const auto [noise90, level] = noise_and_level();
    if (best_i < 0 || best <= kMainFloor * level || best <= kOverNoise * noise90 ||
        env_.slow[best_i] - expect_slow_[at(best_i)] <= kSlowFloor)
      return false;
    found.i = best_i;
    found.height = env_.main[best_i];
    found.slow = env_.slow[best_i];
    found.slope = 0.0f;
    return true;
  }

  const std::vector<Candidate>& beats_;
  const Envelopes& env_;
  const int64_t m_;
  SinusInterval sinus_;
  std::vector<Candidate> out_;
  std::vector<char> premature_;
  std::vector<size_t> regular_;  // indices into out_, oldest first
  std::vector<float> expect_, expect_slow_, column_, column_slow_;
};
}  // namespace

std::vector<Candidate> find_beats_in_pauses(const std::vector<Candidate>& beats,
                                            const Envelopes& env) {
  if (beats.size() < 4) return beats;
  std::vector<float> first;
  for (size_t k = 0; k + 1 < std::min<size_t>(beats.size(), 9); ++k)
    first.push_back(float(beats[k + 1].i - beats[k].i));
  return PauseSearch(beats, env, median(first)).run();
}

}  // namespace hlm::dsp::qrs
