// The run searches of the QRS detector's pause search (qrs_pause_search.h): the beats of a
// ventricular run around a beat the thresholds took or a pause search found. The state they
// read is in qrs_pause_search_impl.h.
#include <algorithm>
#include <cmath>

#include "dsp/qrs_ectopic_forms.h"
#include "dsp/qrs_pause_search_impl.h"

namespace hlm::dsp::qrs::pause {

namespace {
// The highest similarity of any of `candidates` to `form` (-1 where none compares).
float best_similarity(const std::vector<std::vector<float>>& candidates,
                      const std::vector<float>& form) {
  float best = -1.0f;
  for (const std::vector<float>& c : candidates)
    best = std::max(best, EctopicForms::similarity(c, form));
  return best;
}
}  // namespace

// A beat a pause search found, after what the gap before it holds: another beat where it is a
// pause still (a ventricular run the thresholds missed whole: the search took its tallest
// beat, so a wave there of its form closely is taken, Window::of_form), `searches` more times
// at most, else a run's first beat (add_first_of_run); then the rest of a run before it
// (add_run_before, also where the beat before the pause was premature).
void PauseSearch::add_found(const Candidate& found, Found how, int searches) {
  Window before{found.i - kBeforeNext};
  before.of_form = &found;
  Candidate earlier;
  Found earlier_how;
  if (searches > 0 && holds_a_beat(found) && search(out_.back(), before, earlier, &earlier_how))
    add_found(earlier, earlier_how, searches - 1);
  else
    add_first_of_run(found);
  add_run_before(found);
  add(found, how);
}

// The beats of the run the last beat belongs to, up to `next` (next_of_run), where `next` comes
// kPremature sinus intervals or more after it.
void PauseSearch::add_run_before(const Candidate& next) {
  Candidate more;
  while (late_after_premature(next) && next_of_run(next, more)) add(more, Found::kOtherwise);
}

// The run's first beat the gap before `next` may hold where `next` comes on time (on_time).
// Where `next` comes late after a regular beat (kLateRun sinus intervals or more), it may be the
// second beat of a ventricular run whose first the thresholds took for the regular beat's T
// wave: a wave of `next`'s form is taken. Otherwise only one of its form closely (kRunSimilar),
// or of its form and the form of the record's premature beats, as a run's next beat is taken
// (of_the_run): a couplet's second beat reads on time where the sinus interval swings as much
// as the couplet's two coupling intervals exceed it, or after a sinus beat counted premature. A
// ventricular beat has no P wave before it to keep clear of, so the gap is searched closer to
// it than a pause is (kBeforeRun). `next` may itself be a beat a pause search just found there
// (a couplet whose two beats the thresholds both missed: the search takes the taller).
void PauseSearch::add_first_of_run(const Candidate& next) {
  if (!on_time(next) || !tall_in_the_middle(next)) return;
  const Candidate& last = out_.back();
  const bool late_after_regular =
      !premature_.back() && float(next.i - last.i) >= kLateRun * sinus_.value();
  Candidate found;
  Found how;
  if (!search(last, in_the_middle(next), found, &how)) return;
  const float alike = like_the_next(last, found.i, next);
  if (late_after_regular ? alike >= EctopicForms::kSimilar : of_a_run(alike, last, found.i))
    add(found, how);
}

// Whether `next` comes neither premature (kPremature sinus intervals or more after the beat
// before it) nor after a pause.
bool PauseSearch::on_time(const Candidate& next) const {
  if (out_.empty()) return false;
  const float gap = float(next.i - out_.back().i), sinus = sinus_.value();
  return gap >= kPremature * sinus && gap < kPause * sinus;
}

// Whether the main band reaches kRunHeight of `next`'s height about the middle of the gap before
// it (in_the_middle). like_the_next asks that of a wave found there (main_about of a peak in
// [peak_from, peak_end)); checked first, it spares most gaps the search.
bool PauseSearch::tall_in_the_middle(const Candidate& next) const {
  const Window w = in_the_middle(next);
  return main_top(w.peak_from - kFormShift, w.peak_end + kFormShift) >= kRunHeight * next.height;
}

// Where the gap from the last beat to `next` may hold a run's beat: kRunMiddle of the gap or
// less from its middle (a run keeps its coupling interval), the wave falling again kBeforeRun
// before `next`. Read for a run's first beat (before a late beat) and for its next one (after a
// premature beat, next_of_run).
Window PauseSearch::in_the_middle(const Candidate& next) const {
  const int64_t a = out_.back().i, gap = next.i - a;
  const auto at = [&](float share) { return a + std::llround(share * float(gap)); };
  const int64_t end = next.i - kBeforeRun;
  return {end, true, std::min<int64_t>(at(0.5f + kRunMiddle), end), at(0.5f - kRunMiddle)};
}

// How alike the wave found at main-band sample i after `last` is to the form of `next` (the
// beats of a run share one; EctopicForms::similarity, the best read about the wave's peak), or
// -1 where it stands less than kRunHeight of `next`'s height in the main band. Both forms are
// read against the regular beats' waves after `last`, unstretched, refitted here over the
// regular beats search() has just chosen (template_beats_); at `next`, past where the regular
// beats are read, that is their last delay held. A T wave does not have a QRS complex's form.
float PauseSearch::like_the_next(const Candidate& last, int64_t i, const Candidate& next) {
  if (!fit_waves(last, next.i + kFormHalf * kSlowStretch + 1)) return -1.0f;
  if (main_about(i) < kRunHeight * next.height) return -1.0f;
  const std::vector<float> form = form_at(last.i, next.i, 1.0f);
  return form.empty() ? -1.0f : best_similarity(forms_about(last, i, 1.0f), form);
}

// Whether a wave at main-band sample i after `last`, `alike` to a beat of a run (similarity),
// is of that run: alike (EctopicForms::kSimilar) and closely (kRunSimilar: a run of a form the
// record has shown too seldom, or not at all, among its premature beats), or alike and of the
// form of the record's premature beats (like_premature_beats).
bool PauseSearch::of_a_run(float alike, const Candidate& last, int64_t i) const {
  return alike >= EctopicForms::kSimilar &&
         (alike >= kRunSimilar || like_premature_beats(last, i, 1.0f));
}

// Whether `next` comes kPremature sinus intervals or more after a premature beat (not premature
// after it).
bool PauseSearch::late_after_premature(const Candidate& next) const {
  return out_.size() >= 2 && premature_.back() &&
         float(next.i - out_.back().i) >= kPremature * sinus_.value();
}

// The next beat of a run the premature beat out_.back() belongs to, before `next`: the main
// band's highest point one coupling interval after it (kRunCoupling), else in the middle of the
// gap (kRunMiddle), that is of the run (of_the_run). Where the beat found is premature in turn,
// add_run_before reads the gap after it for the run's third beat.
bool PauseSearch::next_of_run(const Candidate& next, Candidate& found) {
  const Candidate& last = out_.back();
  const int64_t coupling = last.i - out_[out_.size() - 2].i;
  const int64_t reach = std::llround(kRunCoupling * float(coupling));
  const int64_t coupled =
      highest_between(last, next, last.i + coupling - reach, last.i + coupling + reach);
  if (coupled >= 0 && of_the_run(last, next, coupled, found)) return true;
  const Window w = in_the_middle(next);
  const int64_t middle = highest_between(last, next, w.peak_from, w.peak_end);
  return middle >= 0 && middle != coupled && of_the_run(last, next, middle, found);
}

// Whether the main band's highest point i between the premature beat `last` and `next` is the
// run's next beat: kRunHeight of the premature beat's own main band or more (main_about: a
// found beat's height is where its wave peaked), with that beat's form (each read against the
// regular beats' waves after the beat before it) and the form of the record's premature beats
// (like_premature_beats), or that beat's form closely (kRunSimilar: a run of a form the record
// has shown too seldom, or not at all, among its premature beats before). No expectation of a
// ventricular beat's own waves is made: its T wave is told from the next beat by its main band
// and its form (a coupling interval after the beat at slow rates is where that T wave lies).
bool PauseSearch::of_the_run(const Candidate& last, const Candidate& next, int64_t i,
                             Candidate& found) {
  if (!as_tall_as(last, i)) return false;
  know(last);
  if (known_.size() < kMinTemplateBeats) return false;
  set_template_beats();
  if (!fit_waves(last, next.i)) return false;
  const std::vector<float> form = form_at(last.i, i, 1.0f);
  const float alike = best_similarity(forms_about(out_[out_.size() - 2], last.i, 1.0f), form);
  if (!of_a_run(alike, last, i)) return false;
  found = beat_at(i);
  return true;
}

// The main band's highest point from sample a to z (not included), kept from kFrom after `last`
// to kBeforeRun before `next` (as before a late beat: a run's beat falls again before the next
// one), if it falls to kDip of its peak on either side before either beat; -1 if not.
int64_t PauseSearch::highest_between(const Candidate& last, const Candidate& next, int64_t a,
                                     int64_t z) const {
  a = std::max<int64_t>(a, last.i + kFrom);
  z = std::min<int64_t>(z, next.i - kBeforeRun);
  int64_t best = -1;
  for (int64_t i = a; i < z; ++i)
    if (best < 0 || env_.main[i] > env_.main[best]) best = i;
  if (best < 0) return -1;
  const auto falls = [&](int64_t from, int64_t to) {
    for (int64_t k = from; k < to; ++k)
      if (env_.main[k] <= kDip * env_.main[best]) return true;
    return false;
  };
  return falls(last.i + kFormShift, best) && falls(best + 1, next.i - kFormShift) ? best : -1;
}

// Whether the main band about sample i stands kRunHeight of its height about `beat` or more.
bool PauseSearch::as_tall_as(const Candidate& beat, int64_t i) const {
  return main_about(i) >= kRunHeight * main_about(beat.i);
}

}  // namespace hlm::dsp::qrs::pause
