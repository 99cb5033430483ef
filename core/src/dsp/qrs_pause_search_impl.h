// The pause search of the QRS detector (qrs_pause_search.h), its state and its parts, shared
// by the walk and the pause searches (qrs_pause_search.cpp) and the run searches
// (qrs_run_search.cpp). Internal to those two files.
#pragma once
#include <cmath>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "dsp/qrs_ectopic_forms.h"
#include "dsp/qrs_pause_search.h"
#include "dsp/qrs_sinus_interval.h"

namespace hlm::dsp::qrs::pause {

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
// premature beats (of_a_run). A wave the search finds there is taken when its peak lies within
// kRunMiddle of the gap from the gap's middle (a run keeps its coupling interval; where the next
// beat is a sinus beat after a long PR interval, its P wave lies nearer that beat), it falls
// again kBeforeRun before the next beat, its main band stands kRunHeight of the next beat's
// height or more (a flutter wave does not), and it has the next beat's form.
//
// The gap after a premature beat, kPremature sinus intervals or more (the first and third beats
// of a triplet lie two coupling intervals apart, which reads as little as one sinus interval
// where the rhythm swings), is read for the next beat of its run (next_of_run): the main
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

inline float median(std::vector<float>& v) { return median_in_place(v.data(), v.size()); }

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
  std::vector<Candidate> run();

 private:
  // The walk over the beats, and what a found beat adds (qrs_pause_search.cpp).
  void walk(bool until_known);
  void look_ahead();
  bool holds_a_beat(const Candidate& next) const;
  void know(const Candidate& last);
  void add(const Candidate& c, Found how = Found::kByThresholds);
  void follow_sinus(const Candidate& c, float interval, bool premature);
  void search_the_end();
  float newest_before() const;

  // The run searches: a ventricular run's beats around a beat found or taken (qrs_run_search.cpp).
  void add_found(const Candidate& found, Found how, int searches);
  void add_run_before(const Candidate& next);
  void add_first_of_run(const Candidate& next);
  bool on_time(const Candidate& next) const;
  bool tall_in_the_middle(const Candidate& next) const;
  Window in_the_middle(const Candidate& next) const;
  float like_the_next(const Candidate& last, int64_t i, const Candidate& next);
  bool of_a_run(float alike, const Candidate& last, int64_t i) const;
  bool late_after_premature(const Candidate& next) const;
  bool next_of_run(const Candidate& next, Candidate& found);
  bool of_the_run(const Candidate& last, const Candidate& next, int64_t i, Candidate& found);
  int64_t highest_between(const Candidate& last, const Candidate& next, int64_t a, int64_t z) const;
  bool as_tall_as(const Candidate& beat, int64_t i) const;

  // A pause's search against the regular beats' envelopes and waves (qrs_pause_search.cpp).
  bool search(const Candidate& last, const Window& window, Candidate& found, Found* how = nullptr);
  void set_template_beats();
  void expectation(int64_t end);
  float expected_slow(const Candidate& last, int64_t i);
  bool column_at(const std::vector<float>& envelope, int64_t d);
  size_t at(const Candidate& last, int64_t i) const;
  template <class Top>
  float regular_noise(int64_t length, Top top) const;
  float envelopes_noise() const;
  float waves_noise() const;
  float bazett(float before) const;
  float level() const;
  template <class Unexplained>
  int64_t separate_peak(int64_t a, const Window& window, Unexplained unexplained) const;
  int64_t in_envelopes(const Candidate& last, const Window& window);
  int64_t in_waves(const Candidate& last, const Window& window);
  bool fit_waves(const Candidate& last, int64_t end);
  float opening(const Candidate& last, float stretch) const;
  bool adds_to_envelopes(const Candidate& last, int64_t a, int64_t z) const;
  Candidate beat_at(int64_t i) const;
  float main_about(int64_t i) const;
  float main_top(int64_t a, int64_t z) const;

  // The forms of waves and of the record's premature beats (qrs_pause_search.cpp).
  std::vector<float> form_at(int64_t after, int64_t i, float stretch) const;
  std::vector<std::vector<float>> forms_about(const Candidate& last, int64_t i,
                                              float stretch) const;
  bool like_premature_beats(const Candidate& last, int64_t i, float stretch) const;

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

}  // namespace hlm::dsp::qrs::pause
