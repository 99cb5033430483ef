// Beats missed inside pauses, found against the regular beats' own waves (see
// qrs_pause_search.h): the walk over the beats and the search of a pause. The run searches are
// in qrs_run_search.cpp, the state both share in qrs_pause_search_impl.h.
#include <algorithm>
#include <cmath>

#include "dsp/qrs_ectopic_forms.h"
#include "dsp/qrs_pause_search_impl.h"

namespace hlm::dsp::qrs {
namespace pause {

std::vector<Candidate> PauseSearch::run() {
  look_ahead();
  walk(/*until_known=*/false);
  search_the_end();
  return std::move(out_);
}

// Adds the beats, each after any beat found in the pause before it; with `until_known`, only
// until kHistory regular beats are known.
void PauseSearch::walk(bool until_known) {
  for (const Candidate& b : beats_) {
    if (until_known && regular_.size() >= kHistory) return;
    if (holds_a_beat(b)) {
      Candidate found;
      Found how;
      if (search(out_.back(), {b.i - kBeforeNext}, found, &how))  // clear of b's P wave
        add_found(found, how, kPauseSearches - 1);
    } else {
      add_first_of_run(b);
    }
    add_run_before(b);
    add(b);
  }
}

// A first walk, up to the record's first kHistory regular beats. Its regular beats stand in for
// those a pause near the record's start has too few of before it (know; the detector reads
// whole records), and its premature beats for the forms (like_premature_beats; premature as the
// first walk's sinus interval had it). Then the walk starts again, from the sinus interval the
// first walk held when a sinus interval first bore it out (SinusInterval::first_confirmed): the
// median of the record's first 8 intervals, where the first walk starts, is too long where
// missed premature beats lengthen them (late-coupled bigeminy from the first beat), and the
// spans around the beats found correct it before any sinus interval confirms it. A record too
// short to hold that many regular beats (the Challenge's 9-60 s) is left as it is, the second
// walk starting from that median again: there the first walk's regular beats are the seconds
// its thresholds settle in, and the pauses searched against them took mostly false beats.
void PauseSearch::look_ahead() {
  walk(/*until_known=*/true);
  const bool known = regular_.size() >= kHistory;
  if (known) {
    ahead_ = std::move(regular_);
    premature_ahead_ = std::move(premature_beats_);
  }
  regular_.clear();
  out_.clear();
  premature_.clear();
  premature_beats_.clear();
  const float confirmed = sinus_.first_confirmed();
  sinus_ = SinusInterval(known && confirmed > 0.0f ? confirmed : first_interval_);
}

// Whether the gap before `next` is a pause that may hide a beat: kPause sinus intervals or
// more, and, after a premature beat, longer than its compensatory pause (the two intervals
// around a premature beat add up to two sinus intervals; a sinus beat that merely came early
// on the rhythm's own swings is premature too).
bool PauseSearch::holds_a_beat(const Candidate& next) const {
  if (out_.empty()) return false;
  const float gap = float(next.i - out_.back().i), sinus = sinus_.value();
  if (gap < kPause * sinus) return false;
  if (!premature_.back()) return true;
  const float before = float(out_.back().i - out_[out_.size() - 2].i);
  return before + gap >= kBeyondCompensatory * sinus;
}

// A beat this search found at main-band sample i.
Candidate PauseSearch::beat_at(int64_t i) const {
  Candidate c;
  c.i = i;
  c.height = env_.main[i];
  c.slow = env_.slow[i];
  return c;
}

// The main band's highest point within kFormShift of sample i.
float PauseSearch::main_about(int64_t i) const { return main_top(i - kFormShift, i + kFormShift); }

// The main band's highest point from sample a to z, both included (clipped to the record).
float PauseSearch::main_top(int64_t a, int64_t z) const {
  float top = 0.0f;
  for (int64_t k = std::max<int64_t>(0, a); k <= z && k < m_; ++k)
    top = std::max(top, env_.main[k]);
  return top;
}

// The stretch after the record's last beat, searched up to the record's end (no next beat's
// waves to keep clear of) when the end closes a pause (holds_a_beat). A shorter stretch may
// still hold the premature beat of a pause the record ends in (not after a premature beat: its
// compensatory pause): its peak is searched up to kPremature sinus intervals, as a beat later
// than that comes on time and the thresholds would have taken it but for the end cutting it
// off, and only a wave the record shows whole (Window::whole: fallen again before the record's
// end) is taken.
void PauseSearch::search_the_end() {
  if (out_.empty()) return;
  Candidate end;
  end.i = m_;
  const bool pause = holds_a_beat(end);
  if (!pause && premature_.back()) return;
  const int64_t on_time = out_.back().i + std::llround(kPremature * sinus_.value());
  Candidate found;
  if (search(out_.back(), pause ? Window{m_} : Window{m_, true, std::min(m_, on_time)}, found))
    out_.push_back(found);
}

// The regular beats a pause after `last` is read against (known_): those before it, and while
// they are fewer than kHistory, the first regular beats after it (look_ahead), the nearest
// counting as the newest after the beats before it. Up to kHistory, as later in the record:
// the template at each delay takes the newest kTemplateBeats that reach it, and at a fast
// rate few regular beats reach a late delay (each is read up to kBeforeNext before its next).
void PauseSearch::know(const Candidate& last) {
  known_.assign(regular_.begin(), regular_.end());
  for (const Regular& r : ahead_) {
    if (known_.size() >= kHistory) break;
    if (r.start > last.i) known_.push_front(r);
  }
}

// Adds beat c, as it came (`how`).
void PauseSearch::add(const Candidate& c, Found how) {
  bool premature = false;
  if (!out_.empty()) {
    const float interval = float(c.i - out_.back().i);
    premature = interval < kPremature * sinus_.value();
    // A regular beat is followed by a sinus interval: a longer gap, pause or not, may hide a
    // beat the expectation would then be made of.
    const bool sinus_after = interval <= kSinusHigh * sinus_.value();
    // A beat read no further than the search starts would add nothing but its height.
    const int64_t stop = std::min(c.i - kBeforeNext, m_);
    if (!premature_.back() && sinus_after && stop - out_.back().i > kFrom)
      regular_.push_back({out_.back().i, stop, out_.back().height, newest_before()});
    if (regular_.size() > kHistory) regular_.pop_front();
    follow_sinus(c, interval, premature);
  }
  // The forms a wave in a pause is compared with (like_premature_beats): premature beats after
  // a beat that was not premature (one after another premature beat carries that beat's
  // waves), taken by the thresholds or found by this search standing clear in both envelopes
  // (Found::kClear: a small or wide form the thresholds miss in a run is found there first).
  // One found in the waves alone may be a T wave that moved, or have been taken on the forms
  // themselves. A found beat stands where its wave peaked, not at its R peak; the forms of a
  // wave are read about its peak (forms_about).
  if (premature && how != Found::kOtherwise && !premature_.back()) {
    premature_beats_.emplace_back(out_.back().i, c.i);
  }
  out_.push_back(c);
  premature_.push_back(premature);
}

// The sinus interval (SinusInterval) told the interval before beat c, `premature` or not, and,
// after a premature beat, the span around it.
void PauseSearch::follow_sinus(const Candidate& c, float interval, bool premature) {
  sinus_.see(interval, premature_.back());
  if (!premature_.back() || out_.size() < 2) return;
  // The beat before came as early after its own as this one after it (within kPremature either
  // way): every beat of a run but its last, as a rule.
  const float before = float(out_.back().i - out_[out_.size() - 2].i);
  const bool in_a_run =
      premature && interval >= kPremature * before && kPremature * interval <= before;
  sinus_.see_around_premature(float(c.i - out_[out_.size() - 2].i), in_a_run);
}

// The main band's envelope expected after a beat, sample by sample from its R peak: the
// medians of the newest kTemplateBeats regular beats that cover each sample (up to kBeforeNext
// before their next beat; kMinTemplateBeats at least), up to `end` samples. Only delays from
// kFrom on are read; those before it are left 0.
void PauseSearch::expectation(int64_t end) {
  expect_.assign(size_t(std::min(kFrom, end)), 0.0f);
  for (int64_t d = kFrom; d < end; ++d) {
    if (!column_at(env_.main, d)) break;
    expect_.push_back(median(column_));
  }
}

// The slow band's expected at sample i after `last` the same way (held at the main band's
// last delay beyond it); only a found point needs it.
float PauseSearch::expected_slow(const Candidate& last, int64_t i) {
  column_at(env_.slow, int64_t(at(last, i)));
  return median(column_);
}

// Fills column_ with `envelope` at delay d after the newest kTemplateBeats regular beats
// that cover it; false when fewer than kMinTemplateBeats do.
bool PauseSearch::column_at(const std::vector<float>& envelope, int64_t d) {
  return template_beats_.column(
      d, kTemplateBeats, [&](int64_t i) { return envelope[i]; }, column_);
}

// What the regular beats leave unexplained themselves: the 90th percentile, over the newest
// kTemplateBeats regular beats read past kFrom, of `top(beat, stop)`, their highest
// unexplained point from kFrom up to delay `stop` (their own end, or `length`).
template <class Top>
float PauseSearch::regular_noise(int64_t length, Top top) const {
  std::vector<float> noise;
  for (auto r = known_.rbegin(); r != known_.rend() && noise.size() < kTemplateBeats; ++r) {
    const int64_t stop = std::min(r->stop - r->start, length);
    if (stop > kFrom) noise.push_back(top(*r, stop));
  }
  return noise.empty() ? 0.0f : percentile_in_place(noise.data(), noise.size(), 0.9f);
}

// The envelopes: the main band above the expectation.
float PauseSearch::envelopes_noise() const {
  return regular_noise(int64_t(expect_.size()), [&](const Regular& r, int64_t stop) {
    float top = 0.0f;
    for (int64_t d = kFrom; d < stop; ++d) top = std::max(top, env_.main[r.start + d] - expect_[d]);
    return top;
  });
}

// The waves: the residual against the template as it is or stretched for the beat by
// bazett(), whichever is lower.
float PauseSearch::waves_noise() const {
  return regular_noise(waves_.length(), [&](const Regular& r, int64_t stop) {
    float lowest = -1.0f;
    for (const float s : {1.0f, bazett(r.before)}) {
      float top = 0.0f;
      for (int64_t d = kFrom; d < stop; ++d)
        top = std::max(top, waves_.residual(r.start + d, d, s));
      lowest = lowest < 0.0f ? top : std::min(lowest, top);
    }
    return lowest;
  });
}

// The interval before the newest beat (0 for the first).
float PauseSearch::newest_before() const {
  return out_.size() < 2 ? 0.0f : float(out_.back().i - out_[out_.size() - 2].i);
}

// The time stretch of a beat's waves after an interval `before`, as Bazett's QT: the square
// root of it over the interval before the template's beats (their median; within 0.5-2 of
// it). 1 when either is unknown.
float PauseSearch::bazett(float before) const {
  if (before <= 0.0f || template_before_ <= 0.0f) return 1.0f;
  return std::sqrt(std::clamp(before / template_before_, 0.5f, 2.0f));
}

// The newest kTemplateBeats regular beats' median height.
float PauseSearch::level() const {
  std::vector<float> heights;
  for (auto r = known_.rbegin(); r != known_.rend() && heights.size() < kTemplateBeats; ++r)
    heights.push_back(r->height);
  return median_in_place(heights.data(), heights.size());
}

// The highest point of `unexplained(i)` from a to the window's peak_end, if a valley of kDip of
// it or less comes before it (a wave of its own), and after it before the window's end too when
// the window must hold it whole; -1 if none.
template <class Unexplained>
int64_t PauseSearch::separate_peak(int64_t a, const Window& window, Unexplained unexplained) const {
  const int64_t z = window.end, peaks = window.peak_end > 0 ? window.peak_end : z;
  float best = 0.0f;
  int64_t best_i = -1;
  for (int64_t i = a; i < peaks; ++i)
    if (unexplained(i) > best) best = unexplained(i), best_i = i;
  const auto falls = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i)
      if (unexplained(i) <= kDip * best) return true;
    return false;
  };
  if (best_i < 0 || !falls(a, best_i) || (window.whole && !falls(best_i + 1, z))) return -1;
  return best_i;
}

// A beat after `last`, in the window up to its end, in the envelopes or else in the waves.
bool PauseSearch::search(const Candidate& last, const Window& window, Candidate& found,
                         Found* how) {
  const int64_t end = window.end;
  know(last);
  if (known_.size() < kMinTemplateBeats || end - last.i <= kFrom) return false;
  set_template_beats();
  expectation(end - last.i);
  if (int64_t(expect_.size()) <= kFrom) return false;
  // A premature beat opens a pause searched only when it is one of the regular beats that came
  // early (a ventricular beat's own waves follow it).
  bool fitted = false;
  if (premature_.back()) {
    if (!fit_waves(last, end)) return false;
    fitted = true;
    if (std::min(opening(last, 1.0f), opening(last, bazett(newest_before()))) > kSameBeat)
      return false;
  }
  int64_t i = in_envelopes(last, window);
  const bool clear = i >= 0;
  if (!clear && adds_to_envelopes(last, last.i + kFrom, end) && (fitted || fit_waves(last, end)))
    i = in_waves(last, window);
  if (i < 0 || !window.holds(i)) return false;
  found = beat_at(i);
  if (how) *how = clear ? Found::kClear : Found::kOtherwise;
  return true;
}

// template_beats_ from known_, newest first.
void PauseSearch::set_template_beats() {
  template_beats_.starts.clear();
  template_beats_.stops.clear();
  for (auto r = known_.rbegin(); r != known_.rend(); ++r)
    template_beats_.starts.push_back(r->start), template_beats_.stops.push_back(r->stop);
}

// Sample i's place in the expectation after `last`, held at its last sample beyond it.
size_t PauseSearch::at(const Candidate& last, int64_t i) const {
  return std::min<size_t>(size_t(i - last.i), expect_.size() - 1);
}

// The highest point above the envelopes' expectation after `last`, if it is a beat; -1 if not.
int64_t PauseSearch::in_envelopes(const Candidate& last, const Window& window) {
  const int64_t best_i = separate_peak(
      last.i + kFrom, window, [&](int64_t i) { return env_.main[i] - expect_[at(last, i)]; });
  if (best_i < 0) return -1;
  const float best = env_.main[best_i] - expect_[at(last, best_i)];
  if (best <= kMainFloor * level() || best <= kOverNoise * envelopes_noise() ||
      env_.slow[best_i] - expected_slow(last, best_i) <= kSlowFloor)
    return -1;
  return best_i;
}

// The highest point of the waves beyond the regular beats' own, if it is a beat; -1 if not.
// (The waves fit after `last`, fit_waves.)
int64_t PauseSearch::in_waves(const Candidate& last, const Window& window) {
  const int64_t end = window.end;
  // The beat's waves as the regular beats' own, or stretched as Bazett's QT (bazett()): a T
  // wave comes later after a longer interval. Whichever leaves less unexplained in the pause
  // is the expectation; one under which no separate wave stands explains the pause.
  float stretch = 1.0f, best = -1.0f;
  int64_t best_i = -1;
  const float stretches[2] = {1.0f, bazett(newest_before())};
  for (int k = 0; k < (stretches[1] == 1.0f ? 1 : 2); ++k) {
    const float s = stretches[k];
    const int64_t i = separate_peak(last.i + kFrom, window,
                                    [&](int64_t i) { return waves_.residual(i, i - last.i, s); });
    const float r = i < 0 ? 0.0f : waves_.residual(i, i - last.i, s);
    if (best < 0.0f || r < best) stretch = s, best = r, best_i = i;
  }
  // The beat that opens the pause must be one of the regular beats (not, say, a ventricular
  // beat, whose own waves follow it).
  if (best_i < 0 || opening(last, stretch) > kSameBeat || best <= kWaveFloor ||
      best <= kOverNoise * waves_noise())
    return -1;
  const int64_t a = std::max(last.i + kFrom, best_i - kAdds), z = std::min(end, best_i + kAdds);
  if (!adds_to_envelopes(last, a, z)) return -1;
  // A wave that adds to the slow envelope, or one of a form the record's premature beats had
  // (qrs_ectopic_forms.h), or of the window's beat's form closely (like_the_next, which refits
  // the waves: nothing after it reads them): a moved T wave is none.
  if (env_.slow[best_i] - expected_slow(last, best_i) > kWaveSlowFloor ||
      like_premature_beats(last, best_i, stretch))
    return best_i;
  return window.of_form && like_the_next(last, best_i, *window.of_form) >= kRunSimilar ? best_i
                                                                                       : -1;
}

// The waves expected after `last` from the regular beats, up to `end`; false when fewer than
// 3 of them reach past kFrom.
bool PauseSearch::fit_waves(const Candidate& last, int64_t end) {
  waves_.fit(template_beats_, end - last.i, kTemplateBeats);
  std::vector<float> before;
  for (auto r = known_.rbegin(); r != known_.rend() && before.size() < kTemplateBeats; ++r)
    if (r->before > 0.0f) before.push_back(r->before);
  template_before_ = before.empty() ? 0.0f : median(before);
  return waves_.length() > kFrom;
}

// How far the beat `last` itself departs from the regular beats' waves: the highest residual
// over its first kFrom, against the template stretched by `stretch`.
float PauseSearch::opening(const Candidate& last, float stretch) const {
  float top = 0.0f;
  for (int64_t d = 0; d < kFrom; ++d) top = std::max(top, waves_.residual(last.i + d, d, stretch));
  return top;
}

// The form (qrs_ectopic_forms.h) of a wave at main-band sample i after a beat at `after`,
// against the regular beats' waves as fitted (stretched by `stretch`); empty where it would
// reach before that beat or past the record's end.
std::vector<float> PauseSearch::form_at(int64_t after, int64_t i, float stretch) const {
  std::vector<float> form;
  for (int64_t t = -kFormHalf; t <= kFormHalf; ++t) {
    const int64_t k = i + t * kSlowStretch;
    if (k < after || k >= m_) return {};
    waves_.differences(k, k - after, stretch, form);
  }
  return form;
}

// The forms of a wave found at main-band sample i, read up to kFormShift either side of it.
std::vector<std::vector<float>> PauseSearch::forms_about(const Candidate& last, int64_t i,
                                                         float stretch) const {
  std::vector<std::vector<float>> out;
  for (int64_t s = -kFormShift; s <= kFormShift; s += kSlowStretch)
    if (auto form = form_at(last.i, i + s, stretch); !form.empty()) out.push_back(std::move(form));
  return out;
}

// Whether a wave found at main-band sample i after `last` has the form of the newest premature
// beats (EctopicForms), each read against the regular beats' waves as now fitted and not
// stretched (they came early, the template's T wave where theirs is), the wave against them as
// in_waves chose: a form is made only when a wave asks, as few do. While the premature beats
// before the pause are fewer than kForms, the first walk's after it stand in (look_ahead), as
// the first regular beats do for the expectation (know).
bool PauseSearch::like_premature_beats(const Candidate& last, int64_t i, float stretch) const {
  EctopicForms forms;
  const size_t newest = std::min(premature_beats_.size(), EctopicForms::kForms);
  size_t kept = newest;
  for (const auto& [before, beat] : premature_ahead_) {
    if (kept >= EctopicForms::kForms) break;
    if (before <= last.i) continue;
    std::vector<float> form = form_at(before, beat, 1.0f);
    if (form.empty()) continue;
    forms.add(std::move(form));
    ++kept;
  }
  for (auto it = premature_beats_.end() - newest; it != premature_beats_.end(); ++it)
    forms.add(form_at(it->first, it->second, 1.0f));
  return forms.matches(forms_about(last, i, stretch));
}

// Whether the main band stands more than kWaveMainFloor of the beats' height above its
// expectation after `last` somewhere in [a, z).
bool PauseSearch::adds_to_envelopes(const Candidate& last, int64_t a, int64_t z) const {
  const float floor = kWaveMainFloor * level();
  for (int64_t k = a; k < z; ++k)
    if (env_.main[k] - expect_[at(last, k)] > floor) return true;
  return false;
}

}  // namespace pause

std::vector<Candidate> find_beats_in_pauses(const std::vector<Candidate>& beats,
                                            const Envelopes& env) {
  if (beats.size() < 4) return beats;
  std::vector<float> first;
  for (size_t k = 0; k + 1 < std::min<size_t>(beats.size(), 9); ++k)
    first.push_back(float(beats[k + 1].i - beats[k].i));
  return pause::PauseSearch(beats, env, pause::median(first)).run();
}

}  // namespace hlm::dsp::qrs
