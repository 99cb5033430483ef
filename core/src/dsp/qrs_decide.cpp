// Adaptive-threshold decision over QRS candidates (see qrs_decide.h).
#include "dsp/qrs_decide.h"

#include <algorithm>
#include <cmath>

#include "dsp/qrs_recent.h"

namespace hlm::dsp::qrs {

namespace {
constexpr float kThreshold = 0.35f;  // share of the way from the noise to the beat level
// The beat level is the median of the last 8 beat heights, the upper of its two middle values;
// where it is more than kBimodal times the lower one the beats are two kinds (PVCs five times
// the sinus beats' height, say, half of the last 8), and the lower one is the level, so the
// smaller kind stays above the threshold.
constexpr float kBimodal = 2.0f;
constexpr float kSearchBack = 0.5f;   // threshold factor when searching a gap again
constexpr float kTWaveSlope = 0.5f;   // a T wave is flatter than half the QRS slope ...
constexpr float kTWaveHeight = 0.6f;  // ... and lower than 0.6 of the beat level
// The ectopic path (see decide): a candidate at least half as tall as the beats in the slow
// band needs only a twentieth of the way from the noise to the beat level in the main band, and
// twice the noise level, when a pause follows it. The main band shrinks a small, wide PVC (0.4
// times the amplitude, 1.8 times the width of the synthetic one) to 0.10-0.14 of the beat
// level; at a tenth of the way, bigeminy at 85 bpm lost 13 % of its PVCs, every one in some
// records. Sinus T waves measured 0.13-0.45 of the beats
// there (MIT-BIH 108 and 201, the synthetic ECG), but broad ones can stand taller than a narrow
// QRS, so the path opens only beyond the T wave's reach, except in a pause (below).
constexpr float kEctopicSlow = 0.5f;
constexpr float kEctopicThreshold = 0.05f;
constexpr float kEctopicOverNoise = 2.0f;
// Inside the T wave's reach the ectopic path opens on search-back, in a gap longer than 1.5
// sinus intervals (halfway between one interval and the two a PVC and its compensatory pause
// span) that does not follow a premature beat (shorter than 0.8 of the mean interval: its own
// pause is long and its broad T wave tall). The sinus interval is the median of the last 8
// intervals between beats neither of which was premature or found by the ectopic path, once
// 8 are known.
constexpr float kEctopicPause = 1.5f;
constexpr float kPremature = 0.8f;
constexpr size_t kSinusSettled = 8;
// A PVC found there must stand taller in the slow band than the sinus beats' own T waves (the
// median of the last 8), by a quarter: a T wave left alone by 2:1 AV block is not. The
// generator's 2:1 block with T waves 0.9 of the R wave took 2 T waves without it. At a half,
// the grid's small PVCs within the T wave's reach were lost in some records (V Se 0.96).
constexpr float kOverOwnT = 1.25f;
constexpr size_t kNoiseSettled = 5;  // noise heights seen before the noise level is trusted
// A gap this many times search-back's with nothing found restarts the beat level (restart_level)
// at recurring candidates (each at least kRecurring of the tallest) this many times the noise
// level.
constexpr float kLockout = 2.0f;
constexpr float kLockoutOverNoise = 3.0f;
constexpr float kRecurring = 0.5f;
// A weak peak this close before a strong beat, after a gap more than twice as long, is the
// beat's P wave or onset (prune_split_intervals): PR intervals reach 0.20 s, and up to 0.25 s
// from the P wave's envelope peak to the QRS's in MIT-BIH 108 (first-degree AV block); a
// longer span loses beats on noisy records for few more peaks turned away
// (docs/notebook/qrs-detector.md).
constexpr double kLateSplitSeconds = 0.25;

// The decision pass over the candidates, in order: its running estimates are the members, and
// each candidate is searched back from (search_back) and then taken, merged or noted (step).
class Decider {
 public:
  Decider(const std::vector<Candidate>& cand, const QrsOptions& options)
      : cand_(cand),
        options_(options),
        refractory_(std::llround(options.refractory_seconds * kRateHz)),
        t_wave_(std::llround(options.t_wave_seconds * kRateHz)) {}

  std::vector<Candidate> run() {
    for (size_t ci = 0; ci < cand_.size(); ++ci) {
      search_back(ci);
      step(ci);
    }
    return prune_split_intervals(beats_);
  }

 private:
  float threshold() const {
    const float upper = beat_h_.median(), lower = beat_h_.lower_median();
    const float q = upper > kBimodal * lower ? lower : upper, z = noise_h_.median();
    return z + kThreshold * (q - z);
  }

  // An ectopic beat comes early and a pause follows it: no candidate clears the threshold
  // sooner after it than the last beat came before it. (This also turns away P waves and the
  // onsets of taller complexes.) The look-ahead stops at two mean intervals, so a long gap is
  // not scanned again and again.
  bool pause_follows(size_t ci) const {
    const float th = threshold();
    const int64_t before = cand_[ci].i - beats_.back().i;
    const int64_t end = cand_[ci].i + std::min<int64_t>(before, std::llround(2.0 * rr_.mean()));
    size_t k = ci + 1;
    for (; k < cand_.size() && cand_[k].i < end; ++k)
      if (cand_[k].height > th) return false;
    return k < cand_.size();  // at the record's end the pause cannot be seen
  }

  // The ectopic path: wide or small ventricular beats, which the main band shrinks to the
  // height of T waves, keep their height in the slow band. Without it the PVCs of a bigeminy
  // below the threshold are missed wholesale: the median of the last 8 beat heights stays with
  // the sinus beats, and the detected RR, doubled, is regular. Only once the noise level is
  // measured (at first it is a guess, and the T waves of the first beats would clear twice
  // that), and, unless `in_t_reach`, beyond the T wave's reach of the last beat.
  bool ectopic(size_t ci, float factor, bool in_t_reach) const {
    const Candidate& c = cand_[ci];
    const float q = beat_h_.median(), z = noise_h_.median();
    // Search-back lowers the share of the way from the noise, never the margin over it.
    const float floor = std::max(factor * (z + kEctopicThreshold * (q - z)), kEctopicOverNoise * z);
    const bool settled = noise_seen_ >= kNoiseSettled && !beats_.empty() &&
                         (in_t_reach || c.i - beats_.back().i >= t_wave_);
    return settled && c.slow >= kEctopicSlow * beat_slow_.median() && c.height > floor &&
           pause_follows(ci);
  }

  // Whether candidate ci is tall enough for a beat, with the thresholds scaled by `factor`.
  bool clears(size_t ci, float factor) const {
    return cand_[ci].height > factor * threshold() || ectopic(ci, factor, false);
  }

  bool t_like(const Candidate& c) const {
    return !beats_.empty() && c.i - beats_.back().i < t_wave_ &&
           c.slope < kTWaveSlope * beats_.back().slope &&
           c.height < kTWaveHeight * beat_h_.median();
  }

  void accept(size_t ci, bool by_ectopic_path) {
    sinus_pushed_last_ = false;
    bool ectopic_here = by_ectopic_path;
    if (!beats_.empty()) {
      const int64_t interval = cand_[ci].i - beats_.back().i;
      ectopic_here = ectopic_here || double(interval) < kPremature * rr_.mean();
      rr_.push(interval);
      if (!ectopic_here && !last_ectopic_) {
        sinus_rr_.push(interval);
        float own_t = 0.0f;
        for (size_t k = since_; k < ci && cand_[k].i - beats_.back().i < t_wave_; ++k)
          own_t = std::max(own_t, cand_[k].slow);
        t_slow_.push(own_t);
        ++sinus_seen_;
        sinus_pushed_last_ = true;
      }
    }
    last_ectopic_ = ectopic_here;
    beat_h_.push(cand_[ci].height);
    beat_slow_.push(cand_[ci].slow);
    beats_.push_back(cand_[ci]);
    since_ = ci + 1;
  }

  // Search-back before candidate ci: a gap long against the mean interval is searched again at
  // half the threshold; a pause against the sinus interval (see kEctopicPause), inside the T
  // wave's reach too, by the ectopic path.
  void search_back(size_t ci) {
    const Candidate& c = cand_[ci];
    const double gap = beats_.empty() ? 0.0 : double(c.i - beats_.back().i);
    const bool long_gap = gap > options_.search_back_rr * rr_.mean();
    const bool after_premature =
        beats_.size() >= 2 &&
        double(beats_.back().i - beats_[beats_.size() - 2].i) < kPremature * rr_.mean();
    const bool pause_gap = sinus_seen_ >= kSinusSettled && !after_premature &&
                           gap > kEctopicPause * double(sinus_rr_.median());
    if (!long_gap && !pause_gap) return;
    auto by_threshold = [&](size_t j) {
      return long_gap && !t_like(cand_[j]) && cand_[j].height > kSearchBack * threshold();
    };
    size_t best = cand_.size();
    for (size_t j = since_; j < ci; ++j)
      if (cand_[j].i - beats_.back().i >= refractory_ && c.i - cand_[j].i >= refractory_ &&
          ((long_gap && !t_like(cand_[j]) && clears(j, kSearchBack)) ||
           (pause_gap && cand_[j].slow > kOverOwnT * t_slow_.median() &&
            ectopic(j, kSearchBack, true))) &&
          (best == cand_.size() || cand_[j].height > cand_[best].height))
        best = j;
    if (best == cand_.size() && long_gap && gap > kLockout * options_.search_back_rr * rr_.mean())
      best = restart_level(ci);
    if (best == cand_.size()) return;
    const bool ectopic_path = !by_threshold(best);
    for (const auto& [j, pushed] : noise_pushes_)
      if (j == best) noise_h_.undo(pushed);
    accept(best, ectopic_path);
  }

  // A gap kLockout times as long as search-back's where even search-back found nothing: the beat
  // level may stand above every beat (artefacts taken for beats raise the median of the last 8
  // heights, and only beats taken lower it again). Where the gap holds recurring peaks (two or
  // more, each at least kRecurring of the tallest) that are not T waves and stand
  // kLockoutOverNoise times the noise level, the beat levels restart at the tallest, and the
  // first of them is returned as a beat (the rest follow); else cand_.size(). A pause holding
  // one P wave or one artefact is left alone.
  size_t restart_level(size_t next) {
    std::vector<size_t> peaks;
    size_t tallest = cand_.size();
    for (size_t j = since_; j < next; ++j)
      if (cand_[j].i - beats_.back().i >= refractory_ &&
          cand_[next].i - cand_[j].i >= refractory_ && !t_like(cand_[j]) &&
          cand_[j].height > kLockoutOverNoise * noise_h_.median()) {
        peaks.push_back(j);
        if (tallest == cand_.size() || cand_[j].height > cand_[tallest].height) tallest = j;
      }
    size_t first = cand_.size(), recurring = 0;
    for (const size_t j : peaks)
      if (cand_[j].height >= kRecurring * cand_[tallest].height) {
        ++recurring;
        if (first == cand_.size()) first = j;
      }
    if (recurring < 2) return cand_.size();
    beat_h_ = Recent<float>(cand_[tallest].height);
    beat_slow_ = Recent<float>(cand_[tallest].slow);
    return first;
  }

  // Candidate ci taken as a beat, as the bigger complex the last beat was the onset of, or as
  // noise.
  void step(size_t ci) {
    const Candidate& c = cand_[ci];
    const bool near = !beats_.empty() && c.i - beats_.back().i < refractory_;
    if (!near && !t_like(c) && clears(ci, 1.0f)) {
      accept(ci, c.height <= threshold());
    } else if (near && c.height > beats_.back().height && c.height > threshold()) {
      // The beat just taken was the onset (or P wave) of this bigger complex.
      beats_.back() = c;
      beat_h_.replace_last(c.height);
      beat_slow_.replace_last(c.slow);
      if (beats_.size() > 1) rr_.replace_last(c.i - beats_[beats_.size() - 2].i);
      if (sinus_pushed_last_) sinus_rr_.replace_last(c.i - beats_[beats_.size() - 2].i);
      last_ectopic_ = false;
      since_ = ci + 1;
    } else if (!near) {
      if (noise_pushes_.size() == 8) noise_pushes_.erase(noise_pushes_.begin());
      noise_pushes_.emplace_back(ci, noise_h_.push(c.height));
      ++noise_seen_;
    }
  }

  const std::vector<Candidate>& cand_;
  const QrsOptions& options_;
  const int64_t refractory_, t_wave_;
  // The fused envelope is scaled to a beat level near 1, which seeds the running estimates.
  Recent<float> beat_h_{0.6f}, noise_h_{0.02f}, beat_slow_{0.6f};
  Recent<int64_t> rr_{static_cast<int64_t>(0.8 * kRateHz)};
  std::vector<Candidate> beats_;
  // Whether the last beat looks ectopic (premature, or found by the ectopic path), and the
  // intervals between beats that do not: the sinus rhythm the pause after a missed PVC is
  // measured against. Kept apart from `rr_` so that T waves, once taken, cannot make the next
  // sinus interval look like a pause (a T wave and the beat after it span one interval; a PVC
  // and its compensatory pause, two).
  bool last_ectopic_ = false;
  Recent<int64_t> sinus_rr_{static_cast<int64_t>(0.8 * kRateHz)};
  size_t sinus_seen_ = 0;
  bool sinus_pushed_last_ = false;
  // The slow-band height of each sinus beat's own T wave (its tallest candidate within the T
  // wave's reach, 0 where none), pushed with each sinus interval: a PVC on the T wave stands
  // taller than the T wave alone did, a T wave left alone by 2:1 AV block does not.
  Recent<float> t_slow_{0.0f};
  // The candidates last taken for noise, so one found again by search-back leaves the noise
  // level: else, in bigeminy, the PVCs turned away as T waves and then found fill the noise
  // estimate until its floor locks them out.
  std::vector<std::pair<size_t, Recent<float>::Pushed>> noise_pushes_;
  size_t since_ = 0;       // first candidate after the last beat
  size_t noise_seen_ = 0;  // noise heights pushed so far
};

}  // namespace

std::vector<Candidate> decide(const std::vector<Candidate>& cand, const QrsOptions& options) {
  return Decider(cand, options).run();
}

std::vector<Candidate> prune_split_intervals(const std::vector<Candidate>& beats) {
  constexpr size_t kHalf = 5;  // neighbours on each side that set the local norms
  const int64_t late_split_gap = std::llround(kLateSplitSeconds * kRateHz);
  std::vector<Candidate> out;
  std::vector<float> h, rr;
  for (size_t j = 0; j < beats.size(); ++j) {
    if (j == 0 || j + 1 == beats.size()) {
      out.push_back(beats[j]);
      continue;
    }
    // Cheap test first: both split tests need the next beat 1.14 times higher than this one.
    if (beats[j + 1].height <= beats[j].height * (0.8f / 0.7f)) {
      out.push_back(beats[j]);
      continue;
    }
    h.clear();
    rr.clear();
    for (size_t k = j >= kHalf ? j - kHalf : 0; k < std::min(beats.size(), j + kHalf + 1); ++k) {
      if (k != j) h.push_back(beats[k].height);
      if (k > 0) rr.push_back(float(beats[k].i - beats[k - 1].i));
    }
    std::nth_element(h.begin(), h.begin() + h.size() / 2, h.end());
    std::nth_element(rr.begin(), rr.begin() + rr.size() / 2, rr.end());
    const float level = h[h.size() / 2], r = rr[rr.size() / 2];
    const int64_t gap_before = beats[j].i - beats[j - 1].i, gap_after = beats[j + 1].i - beats[j].i;
    const float before = float(gap_before) / r, after = float(gap_after) / r;
    const bool weak = beats[j].height < 0.7f * level;
    const bool strong_next = beats[j + 1].height >= 0.8f * level;
    const bool split = weak && before < 0.8f && before + after < 1.1f && strong_next;
    // The same split late in the interval: a P wave (tall ones, as with first-degree AV block)
    // or the onset of the complex. Ratios of the local median interval cannot show it where
    // such peaks come beat after beat (the median interval is then itself split), so it is
    // read in time: two ventricular beats closer than kLateSplitSeconds are both tall only in
    // flutter, and a premature weak beat has a pause after it, not before. A P wave is also
    // flatter than its QRS: a weak peak steeper than the strong one after it is more likely a
    // small QRS followed by its tall T wave, and stays.
    const bool late_split = weak && strong_next && gap_after < late_split_gap &&
                            gap_before > 2 * gap_after && beats[j].slope < beats[j + 1].slope;
    if (!split && !late_split) out.push_back(beats[j]);
  }
  return out;
}

}  // namespace hlm::dsp::qrs
