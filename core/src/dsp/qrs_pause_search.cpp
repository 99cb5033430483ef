// Beats missed inside pauses, found against the regular beats' own waves (see
// qrs_pause_search.h).
#include "dsp/qrs_pause_search.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "dsp/qrs_ectopic_forms.h"
#include "dsp/qrs_sinus_interval.h"

namespace hlm::dsp::qrs {

namespace {
constexpr float kPause = SinusInterval::kPause;
constexpr float kPremature = SinusInterval::kPremature;
constexpr float kSinusHigh = SinusInterval::kSinusHigh;
// A pause after a premature beat that hides another beat: the two intervals around the premature
// beat add up to a quarter of a sinus interval more than a full compensatory pause (two).
constexpr float kBeyondCompensatory = 2.25f;
constexpr size_t kTemplateBeats = 15;               // beats an expectation is made of, per delay
constexpr size_t kHistory = 4 * kTemplateBeats;     // the regular beats they are chosen from
const int64_t kFrom = std::llround(0.2 * kRateHz);  // the search starts this long after a beat
const int64_t kBeforeNext = std::llround(0.3 * kRateHz);  // and stops this long before the next
// A gap short of a pause after a regular beat, before a beat kLateRun sinus intervals or more
// after it, may hold a ventricular run's first beat that the thresholds took for the T wave
// (add_first_of_run); so may a gap before a beat on time (not premature), also after a premature
// beat, where the wave found there has that beat's form closely (kRunSimilar: a couplet's second
// beat reads on time where the sinus interval swings), or its form and the form of the record's
// premature beats (of_a_run). A wave the search finds there is taken
// when its peak lies within kRunMiddle of the gap from the gap's middle (a run keeps its coupling
// interval; where the next beat is a sinus beat after a long PR interval, its P wave lies nearer
// that beat), it falls again kBeforeRun before the next beat, its main band stands kRunHeight of
// the next beat's height or more (a flutter wave does not), and it has the next beat's form.
//
// The gap after a premature beat, kLateRun sinus intervals or more (kPremature before a beat a
// pause search found, add_found), is read for the next beat of its run (next_of_run): the main
// band's highest point within kRunCoupling of the premature beat's coupling interval after it (a
// run's beats follow each other at about that interval: the second and third of a triplet lie a
// quarter and half way into the gap before the sinus beat after it), else within kRunMiddle of that
// gap's middle; a wave of its own, kRunHeight of the premature beat's own main band or more, of its
// form and of the record's premature beats' forms; or of its form closely (kRunSimilar), for a run
// whose form the record has shown too seldom before.
constexpr float kLateRun = 1.05f;
constexpr float kRunSimilar = 0.95f;
constexpr float kRunMiddle = 0.15f;
constexpr float kRunHeight = 0.5f;
constexpr float kRunCoupling = 0.2f;
// A pause whose search found a beat with a pause still before it is searched again, up to
// kPauseSearches times in all (a triplet the thresholds missed whole needs two).
constexpr int kPauseSearches = 3;
const int64_t kBeforeRun = std::llround(0.15 * kRateHz);
// A beat found in a pause: what stands above the expectation in the main band is more than
// kMainFloor of the beats' height and kOverNoise times what the regular beats leave
// unexplained, more than kSlowFloor of the beat level in the slow band (a blocked P wave is not),
// and it dips to kDip of its peak or less before it (a separate wave, not a tail the expectation
// misses from the window's start, as after a run of faster beats with other waves).
constexpr float kMainFloor = 0.06f;
constexpr float kOverNoise = 3.0f;
constexpr float kSlowFloor = 0.15f;
constexpr float kDip = 0.5f;
// Or, in the waves themselves (qrs_pause_waves.h): what the pause holds beyond the regular
// beats' waves is more than kWaveFloor of the beats' amplitude (a blocked P wave is less) and
// kOverNoise times what the regular beats leave unexplained, and dips to kDip before it; the
// beat that opens the pause departs from the regular beats' waves by no more than kSameBeat of
// their amplitude in its first kFrom (it is one of them); within kAdds of the point the main
// band stands more than kWaveMainFloor of the beats' height above its expectation; and at the
// point the slow band stands more than kWaveSlowFloor of the beat level above its own (a wave
// that only moved, such as a T wave later after a longer interval, adds little to them).
constexpr float kWaveFloor = 0.35f;
constexpr float kSameBeat = 1.0f;
constexpr float kWaveMainFloor = 0.03f;
constexpr float kWaveSlowFloor = 0.03f;
const int64_t kAdds = std::llround(0.05 * kRateHz);
// A form (qrs_ectopic_forms.h): kFormSeconds either side of a beat, in slow-band samples; and how
// far from the wave a pause search found its beat's R peak may lie (also how far about a point
// its main band's height is read, main_about).
const int64_t kFormHalf = std::llround(kFormSeconds * kRateHz / kSlowStretch);
const int64_t kFormShift = std::llround(0.04 * kRateHz);

float median(std::vector<float>& v) { return median_in_place(v.data(), v.size()); }

// Where a search after a beat looks: up to `end` (not included), and whether a wave found there
// must fall again before it (`whole`: the stretch a record ends in, PauseSearch::search_the_end,
// and the middle of a gap, PauseSearch::in_the_middle), its peak lying from `peak_from` on and
// before `peak_end` (the window's end where 0).
struct Window {
  int64_t end;
  bool whole = false;
  int64_t peak_end = 0;
  int64_t peak_from = 0;  // a peak found before it is not taken (holds)
  // A wave in the waves alone of this beat's form closely is taken without the record's
  // premature forms (in_waves).
  const Candidate* of_form = nullptr;
  bool holds(int64_t peak) const { return peak >= peak_from; }
};

// How a beat came: taken by the thresholds; found by the pause search standing clear in both
// envelopes (in_envelopes); or found otherwise (in the waves alone, or a run's beat in the main
// band). Only the first two lend their forms (PauseSearch::add).
enum class Found { kByThresholds, kClear, kOtherwise };

// Walks the beats in order, keeping the sinus interval and the last regular beats (not
// premature, followed by a sinus interval), and searches each pause that may hide a beat
// (holds_a_beat).
class PauseSearch {
 public:
  PauseSearch(const std::vector<Candidate>& beats, const Envelopes& env, float first_interval)
      : beats_(beats),
        env_(env),
        m_(int64_t(env.main.size())),
        first_interval_(first_interval),
        sinus_(first_interval),
        waves_(env.waves) {}

  std::vector<Candidate> run() {
    look_ahead();
    walk(/*until_known=*/false);
    search_the_end();
    return std::move(out_);
  }

 private:
  // Adds the beats, each after any beat found in the pause before it; with `until_known`, only
  // until kHistory regular beats are known.
  void walk(bool until_known) {
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

  // A beat a pause search found, after what the gap before it holds: another beat where it is a
  // pause still (a ventricular run the thresholds missed whole: the search took its tallest
  // beat, so a wave there of its form closely is taken, Window::of_form), `searches` more times
  // at most, else a run's first beat (add_first_of_run); then the rest of a run before it
  // (add_run_before, also where the beat before the pause was premature), from kPremature sinus
  // intervals after a premature beat on: the first and third beats of a triplet lie two coupling
  // intervals apart, which reads as little as one sinus interval where the rhythm swings.
  void add_found(const Candidate& found, Found how, int searches) {
    Window before{found.i - kBeforeNext};
    before.of_form = &found;
    Candidate earlier;
    Found earlier_how;
    if (searches > 0 && holds_a_beat(found) && search(out_.back(), before, earlier, &earlier_how))
      add_found(earlier, earlier_how, searches - 1);
    else
      add_first_of_run(found);
    add_run_before(found, kPremature);
    add(found, how);
  }

  // The beats of the run the last beat belongs to, up to `next` (next_of_run), where `next` comes
  // `late` sinus intervals or more after it.
  void add_run_before(const Candidate& next, float late = kLateRun) {
    Candidate more;
    while (late_after_premature(next, late) && next_of_run(next, more))
      add(more, Found::kOtherwise);
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
  void add_first_of_run(const Candidate& next) {
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
  void look_ahead() {
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
  bool holds_a_beat(const Candidate& next) const {
    if (out_.empty()) return false;
    const float gap = float(next.i - out_.back().i), sinus = sinus_.value();
    if (gap < kPause * sinus) return false;
    if (!premature_.back()) return true;
    const float before = float(out_.back().i - out_[out_.size() - 2].i);
    return before + gap >= kBeyondCompensatory * sinus;
  }

  // Whether `next` comes neither premature (kPremature sinus intervals or more after the beat
  // before it) nor after a pause.
  bool on_time(const Candidate& next) const {
    if (out_.empty()) return false;
    const float gap = float(next.i - out_.back().i), sinus = sinus_.value();
    return gap >= kPremature * sinus && gap < kPause * sinus;
  }

  // Whether the main band reaches kRunHeight of `next`'s height about the middle of the gap before
  // it (in_the_middle). like_the_next asks that of a wave found there (main_about of a peak in
  // [peak_from, peak_end)); checked first, it spares most gaps the search.
  bool tall_in_the_middle(const Candidate& next) const {
    const Window w = in_the_middle(next);
    return main_top(w.peak_from - kFormShift, w.peak_end + kFormShift) >= kRunHeight * next.height;
  }

  // Where the gap from the last beat to `next` may hold a run's beat: kRunMiddle of the gap or
  // less from its middle (a run keeps its coupling interval), the wave falling again kBeforeRun
  // before `next`. Read for a run's first beat (before a late beat) and for its next one (after a
  // premature beat, next_of_run).
  Window in_the_middle(const Candidate& next) const {
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
  float like_the_next(const Candidate& last, int64_t i, const Candidate& next) {
    if (!fit_waves(last, next.i + kFormHalf * kSlowStretch + 1)) return -1.0f;
    if (main_about(i) < kRunHeight * next.height) return -1.0f;
    const std::vector<float> form = form_at(last.i, next.i, 1.0f);
    return form.empty() ? -1.0f : best_similarity(forms_about(last, i, 1.0f), form);
  }
  // The highest similarity of any of `candidates` to `form` (-1 where none compares).
  static float best_similarity(const std::vector<std::vector<float>>& candidates,
                               const std::vector<float>& form) {
    float best = -1.0f;
    for (const std::vector<float>& c : candidates)
      best = std::max(best, EctopicForms::similarity(c, form));
    return best;
  }
  // Whether a wave at main-band sample i after `last`, `alike` to a beat of a run (similarity),
  // is of that run: alike (EctopicForms::kSimilar) and closely (kRunSimilar: a run of a form the
  // record has shown too seldom, or not at all, among its premature beats), or alike and of the
  // form of the record's premature beats (like_premature_beats).
  bool of_a_run(float alike, const Candidate& last, int64_t i) const {
    return alike >= EctopicForms::kSimilar &&
           (alike >= kRunSimilar || like_premature_beats(last, i, 1.0f));
  }

  // Whether `next` comes `late` sinus intervals or more after a premature beat.
  bool late_after_premature(const Candidate& next, float late) const {
    return out_.size() >= 2 && premature_.back() &&
           float(next.i - out_.back().i) >= late * sinus_.value();
  }

  // The next beat of a run the premature beat out_.back() belongs to, before `next`: the main
  // band's highest point one coupling interval after it (kRunCoupling), else in the middle of the
  // gap (kRunMiddle), that is of the run (of_the_run). Where the beat found is premature in turn,
  // add_run_before reads the gap after it for the run's third beat.
  bool next_of_run(const Candidate& next, Candidate& found) {
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
  bool of_the_run(const Candidate& last, const Candidate& next, int64_t i, Candidate& found) {
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

  // A beat this search found at main-band sample i.
  Candidate beat_at(int64_t i) const {
    Candidate c;
    c.i = i;
    c.height = env_.main[i];
    c.slow = env_.slow[i];
    return c;
  }

  // The main band's highest point from sample a to z (not included), kept from kFrom after `last`
  // to kBeforeRun before `next` (as before a late beat: a run's beat falls again before the next
  // one), if it falls to kDip of its peak on either side before either beat; -1 if not.
  int64_t highest_between(const Candidate& last, const Candidate& next, int64_t a,
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
  bool as_tall_as(const Candidate& beat, int64_t i) const {
    return main_about(i) >= kRunHeight * main_about(beat.i);
  }
  // The main band's highest point within kFormShift of sample i.
  float main_about(int64_t i) const { return main_top(i - kFormShift, i + kFormShift); }
  // The main band's highest point from sample a to z, both included (clipped to the record).
  float main_top(int64_t a, int64_t z) const {
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
  void search_the_end() {
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
  void know(const Candidate& last) {
    known_.assign(regular_.begin(), regular_.end());
    for (const Regular& r : ahead_) {
      if (known_.size() >= kHistory) break;
      if (r.start > last.i) known_.push_front(r);
    }
  }

  // Adds beat c, as it came (`how`).
  void add(const Candidate& c, Found how = Found::kByThresholds) {
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
  void follow_sinus(const Candidate& c, float interval, bool premature) {
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
  void expectation(int64_t end) {
    expect_.assign(size_t(std::min(kFrom, end)), 0.0f);
    for (int64_t d = kFrom; d < end; ++d) {
      if (!column_at(env_.main, d)) break;
      expect_.push_back(median(column_));
    }
  }
  // The slow band's expected at sample i after `last` the same way (held at the main band's
  // last delay beyond it); only a found point needs it.
  float expected_slow(const Candidate& last, int64_t i) {
    column_at(env_.slow, int64_t(at(last, i)));
    return median(column_);
  }
  // Fills column_ with `envelope` at delay d after the newest kTemplateBeats regular beats
  // that cover it; false when fewer than kMinTemplateBeats do.
  bool column_at(const std::vector<float>& envelope, int64_t d) {
    return template_beats_.column(
        d, kTemplateBeats, [&](int64_t i) { return envelope[i]; }, column_);
  }

  // What the regular beats leave unexplained themselves: the 90th percentile, over the newest
  // kTemplateBeats regular beats read past kFrom, of `top(beat, stop)`, their highest
  // unexplained point from kFrom up to delay `stop` (their own end, or `length`).
  template <class Top>
  float regular_noise(int64_t length, Top top) const {
    std::vector<float> noise;
    for (auto r = known_.rbegin(); r != known_.rend() && noise.size() < kTemplateBeats; ++r) {
      const int64_t stop = std::min(r->stop - r->start, length);
      if (stop > kFrom) noise.push_back(top(*r, stop));
    }
    return noise.empty() ? 0.0f : percentile_in_place(noise.data(), noise.size(), 0.9f);
  }
  // The envelopes: the main band above the expectation.
  float envelopes_noise() const {
    return regular_noise(int64_t(expect_.size()), [&](const Regular& r, int64_t stop) {
      float top = 0.0f;
      for (int64_t d = kFrom; d < stop; ++d)
        top = std::max(top, env_.main[r.start + d] - expect_[d]);
      return top;
    });
  }
  // The waves: the residual against the template as it is or stretched for the beat by
  // bazett(), whichever is lower.
  float waves_noise() const {
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
  float newest_before() const {
    return out_.size() < 2 ? 0.0f : float(out_.back().i - out_[out_.size() - 2].i);
  }
  // The time stretch of a beat's waves after an interval `before`, as Bazett's QT: the square
  // root of it over the interval before the template's beats (their median; within 0.5-2 of
  // it). 1 when either is unknown.
  float bazett(float before) const {
    if (before <= 0.0f || template_before_ <= 0.0f) return 1.0f;
    return std::sqrt(std::clamp(before / template_before_, 0.5f, 2.0f));
  }

  // The newest kTemplateBeats regular beats' median height.
  float level() const {
    std::vector<float> heights;
    for (auto r = known_.rbegin(); r != known_.rend() && heights.size() < kTemplateBeats; ++r)
      heights.push_back(r->height);
    return median_in_place(heights.data(), heights.size());
  }

  // The highest point of `unexplained(i)` from a to the window's peak_end, if a valley of kDip of
  // it or less comes before it (a wave of its own), and after it before the window's end too when
  // the window must hold it whole; -1 if none.
  template <class Unexplained>
  int64_t separate_peak(int64_t a, const Window& window, Unexplained unexplained) const {
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
  bool search(const Candidate& last, const Window& window, Candidate& found, Found* how = nullptr) {
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
  void set_template_beats() {
    template_beats_.starts.clear();
    template_beats_.stops.clear();
    for (auto r = known_.rbegin(); r != known_.rend(); ++r)
      template_beats_.starts.push_back(r->start), template_beats_.stops.push_back(r->stop);
  }

  // Sample i's place in the expectation after `last`, held at its last sample beyond it.
  size_t at(const Candidate& last, int64_t i) const {
    return std::min<size_t>(size_t(i - last.i), expect_.size() - 1);
  }

  // The highest point above the envelopes' expectation after `last`, if it is a beat; -1 if not.
  int64_t in_envelopes(const Candidate& last, const Window& window) {
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
  int64_t in_waves(const Candidate& last, const Window& window) {
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
  bool fit_waves(const Candidate& last, int64_t end) {
    waves_.fit(template_beats_, end - last.i, kTemplateBeats);
    std::vector<float> before;
    for (auto r = known_.rbegin(); r != known_.rend() && before.size() < kTemplateBeats; ++r)
      if (r->before > 0.0f) before.push_back(r->before);
    template_before_ = before.empty() ? 0.0f : median(before);
    return waves_.length() > kFrom;
  }

  // How far the beat `last` itself departs from the regular beats' waves: the highest residual
  // over its first kFrom, against the template stretched by `stretch`.
  float opening(const Candidate& last, float stretch) const {
    float top = 0.0f;
    for (int64_t d = 0; d < kFrom; ++d)
      top = std::max(top, waves_.residual(last.i + d, d, stretch));
    return top;
  }

  // The form (qrs_ectopic_forms.h) of a wave at main-band sample i after a beat at `after`,
  // against the regular beats' waves as fitted (stretched by `stretch`); empty where it would
  // reach before that beat or past the record's end.
  std::vector<float> form_at(int64_t after, int64_t i, float stretch) const {
    std::vector<float> form;
    for (int64_t t = -kFormHalf; t <= kFormHalf; ++t) {
      const int64_t k = i + t * kSlowStretch;
      if (k < after || k >= m_) return {};
      waves_.differences(k, k - after, stretch, form);
    }
    return form;
  }
  // The forms of a wave found at main-band sample i, read up to kFormShift either side of it.
  std::vector<std::vector<float>> forms_about(const Candidate& last, int64_t i,
                                              float stretch) const {
    std::vector<std::vector<float>> out;
    for (int64_t s = -kFormShift; s <= kFormShift; s += kSlowStretch)
      if (auto form = form_at(last.i, i + s, stretch); !form.empty())
        out.push_back(std::move(form));
    return out;
  }
  // Whether a wave found at main-band sample i after `last` has the form of the newest premature
  // beats (EctopicForms), each read against the regular beats' waves as now fitted and not
  // stretched (they came early, the template's T wave where theirs is), the wave against them as
  // in_waves chose: a form is made only when a wave asks, as few do. While the premature beats
  // before the pause are fewer than kForms, the first walk's after it stand in (look_ahead), as
  // the first regular beats do for the expectation (know).
  bool like_premature_beats(const Candidate& last, int64_t i, float stretch) const {
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
  bool adds_to_envelopes(const Candidate& last, int64_t a, int64_t z) const {
    const float floor = kWaveMainFloor * level();
    for (int64_t k = a; k < z; ++k)
      if (env_.main[k] - expect_[at(last, k)] > floor) return true;
    return false;
  }

  const std::vector<Candidate>& beats_;
  const Envelopes& env_;
  const int64_t m_;
  const float first_interval_;
  SinusInterval sinus_;
  std::vector<Candidate> out_;
  std::vector<char> premature_;
  // A regular beat: its R peak, where it is read up to, its height, the interval before it.
  struct Regular {
    int64_t start, stop;
    float height, before;
  };
  std::deque<Regular> regular_;  // oldest first, at most kHistory
  std::deque<Regular> ahead_;    // the record's first regular beats (look_ahead)
  std::deque<Regular> known_;    // what the pause searched is read against (know)
  PauseWaves waves_;
  // The premature beats' R peaks, each with the beat's before it, oldest first (the newest
  // kForms are matched; like_premature_beats).
  std::vector<std::pair<int64_t, int64_t>> premature_beats_;
  std::vector<std::pair<int64_t, int64_t>> premature_ahead_;  // the first walk's, oldest first
  float template_before_ = 0.0f;  // the interval before the template's beats (fit_waves)
  TemplateBeats template_beats_;  // known_, newest first, as of the pause searched
  std::vector<float> expect_, column_;
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
