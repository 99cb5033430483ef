// Adaptive-threshold decision over QRS candidates (see qrs_decide.h).
#include "dsp/qrs_decide.h"

#include <algorithm>
#include <cmath>

namespace hlm::dsp::qrs {

namespace {
constexpr float kThreshold = 0.35f;   // share of the way from the noise to the beat level
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
// A weak peak this close before a strong beat, after a gap more than twice as long, is the
// beat's P wave or onset (prune_split_intervals): PR intervals reach 0.20 s, and up to 0.25 s
// from the P wave's envelope peak to the QRS's in MIT-BIH 108 (first-degree AV block); a
// longer span loses beats on noisy records for few more peaks turned away
// (docs/notebook/qrs-detector.md).
constexpr double kLateSplitSeconds = 0.25;

// A ring of the last 8 values; the median is recomputed only when a value changes.
template <class T>
struct Recent {
  T v[8];
  size_t next = 0;
  T med;
  explicit Recent(T init) : med(init) { std::fill(v, v + 8, init); }
  // Puts x in place of the oldest value; returns what undo() needs to take it back.
  struct Pushed {
    size_t at;
    T old;
  };
  Pushed push(T x) {
    const Pushed p{next, v[next % 8]};
    v[next++ % 8] = x;
    update();
    return p;
  }
  // Puts back the value a push overwrote, unless 8 later pushes have already pushed it out.
  void undo(const Pushed& p) {
    if (next - p.at > 8) return;
    v[p.at % 8] = p.old;
    update();
  }
  void replace_last(T x) {
    v[(next + 7) % 8] = x;
    update();
  }
  T median() const { return med; }
  double mean() const {
    double s = 0.0;
    for (const T& x : v) s += double(x);
    return s / 8.0;
  }

 private:
  void update() {
    T c[8];
    std::copy(v, v + 8, c);
    std::nth_element(c, c + 4, c + 8);
    med = c[4];
  }
};
}  // namespace

std::vector<Candidate> decide(const std::vector<Candidate>& cand, const QrsOptions& options) {
  const int64_t refractory = std::llround(options.refractory_seconds * kRateHz);
  const int64_t t_wave = std::llround(options.t_wave_seconds * kRateHz);
  // The fused envelope is scaled to a beat level near 1, which seeds the running estimates.
  Recent<float> beat_h(0.6f), noise_h(0.02f), beat_slow(0.6f);
  Recent<int64_t> rr(static_cast<int64_t>(0.8 * kRateHz));
  std::vector<Candidate> beats;
  // Whether the last beat looks ectopic (premature, or found by the ectopic path), and the
  // intervals between beats that do not: the sinus rhythm the pause after a missed PVC is
  // measured against. Kept apart from `rr` so that T waves, once taken, cannot make the next sinus
  // interval look like a pause (a T wave and the beat after it span one interval; a PVC and
  // its compensatory pause, two).
  bool last_ectopic = false;
  Recent<int64_t> sinus_rr(static_cast<int64_t>(0.8 * kRateHz));
  size_t sinus_seen = 0;
  bool sinus_pushed_last = false;
  // The slow-band height of each sinus beat's own T wave (its tallest candidate within the T
  // wave's reach, 0 where none), pushed with each sinus interval: a PVC on the T wave stands
  // taller than the T wave alone did, a T wave left alone by 2:1 AV block does not.
  Recent<float> t_slow(0.0f);
  // The candidates last taken for noise, so one found again by search-back leaves the noise
  // level: else, in bigeminy, the PVCs turned away as T waves and then found fill the noise
  // estimate until its floor locks them out.
  std::vector<std::pair<size_t, Recent<float>::Pushed>> noise_pushes;
  size_t since = 0;       // first candidate after the last beat
  size_t noise_seen = 0;  // noise heights pushed so far
  auto threshold = [&] {
    const float q = beat_h.median(), z = noise_h.median();
    return z + kThreshold * (q - z);
  };
  // An ectopic beat comes early and a pause follows it: no candidate clears the threshold
  // sooner after it than the last beat came before it. (This also turns away P waves and the
  // onsets of taller complexes.) The look-ahead stops at two mean intervals, so a long gap is
  // not scanned again and again.
  auto pause_follows = [&](size_t ci) {
    const float th = threshold();
    const int64_t before = cand[ci].i - beats.back().i;
    const int64_t end = cand[ci].i + std::min<int64_t>(before, std::llround(2.0 * rr.mean()));
    size_t k = ci + 1;
    for (; k < cand.size() && cand[k].i < end; ++k)
      if (cand[k].height > th) return false;
    return k < cand.size();  // at the record's end the pause cannot be seen
  };
  // The ectopic path: wide or small ventricular beats, which the main band shrinks to the
  // height of T waves, keep their height in the slow band. Without it the PVCs of a bigeminy
  // below the threshold are missed wholesale: the median of the last 8 beat heights stays with
  // the sinus beats, and the detected RR, doubled, is regular. Only once the noise level is
  // measured (at first it is a guess, and the T waves of the first beats would clear twice
  // that), and, unless `in_t_reach`, beyond the T wave's reach of the last beat.
  auto ectopic = [&](size_t ci, float factor, bool in_t_reach) {
    const Candidate& c = cand[ci];
    const float q = beat_h.median(), z = noise_h.median();
    // Search-back lowers the share of the way from the noise, never the margin over it.
    const float floor = std::max(factor * (z + kEctopicThreshold * (q - z)), kEctopicOverNoise * z);
    const bool settled = noise_seen >= kNoiseSettled && !beats.empty() &&
                         (in_t_reach || c.i - beats.back().i >= t_wave);
    return settled && c.slow >= kEctopicSlow * beat_slow.median() && c.height > floor &&
           pause_follows(ci);
  };
  // Whether candidate ci is tall enough for a beat, with the thresholds scaled by `factor`.
  auto clears = [&](size_t ci, float factor) {
    return cand[ci].height > factor * threshold() || ectopic(ci, factor, false);
  };
  auto t_like = [&](const Candidate& c) {
    return !beats.empty() && c.i - beats.back().i < t_wave &&
           c.slope < kTWaveSlope * beats.back().slope && c.height < kTWaveHeight * beat_h.median();
  };
  auto accept = [&](size_t ci, bool by_ectopic_path) {
    sinus_pushed_last = false;
    bool ectopic_here = by_ectopic_path;
    if (!beats.empty()) {
      const int64_t interval = cand[ci].i - beats.back().i;
      ectopic_here = ectopic_here || double(interval) < kPremature * rr.mean();
      rr.push(interval);
      if (!ectopic_here && !last_ectopic) {
        sinus_rr.push(interval);
        float own_t = 0.0f;
        for (size_t k = since; k < ci && cand[k].i - beats.back().i < t_wave; ++k)
          own_t = std::max(own_t, cand[k].slow);
        t_slow.push(own_t);
        ++sinus_seen;
        sinus_pushed_last = true;
      }
    }
    last_ectopic = ectopic_here;
    beat_h.push(cand[ci].height);
    beat_slow.push(cand[ci].slow);
    beats.push_back(cand[ci]);
    since = ci + 1;
  };
  for (size_t ci = 0; ci < cand.size(); ++ci) {
    const Candidate& c = cand[ci];
    // Search-back: a gap long against the mean interval is searched again at half the
    // threshold; a pause against the sinus interval (see kEctopicPause), inside the T wave's
    // reach too, by the ectopic path.
    const double gap = beats.empty() ? 0.0 : double(c.i - beats.back().i);
    const bool long_gap = gap > options.search_back_rr * rr.mean();
    const bool after_premature =
        beats.size() >= 2 &&
        double(beats.back().i - beats[beats.size() - 2].i) < kPremature * rr.mean();
    const bool pause_gap = sinus_seen >= kSinusSettled && !after_premature &&
                           gap > kEctopicPause * double(sinus_rr.median());
    if (long_gap || pause_gap) {
      auto by_threshold = [&](size_t j) {
        return long_gap && !t_like(cand[j]) && cand[j].height > kSearchBack * threshold();
      };
      size_t best = cand.size();
      for (size_t j = since; j < ci; ++j)
        if (cand[j].i - beats.back().i >= refractory && c.i - cand[j].i >= refractory &&
            ((long_gap && !t_like(cand[j]) && clears(j, kSearchBack)) ||
             (pause_gap && cand[j].slow > kOverOwnT * t_slow.median() &&
              ectopic(j, kSearchBack, true))) &&
            (best == cand.size() || cand[j].height > cand[best].height))
          best = j;
      if (best != cand.size()) {
        const bool ectopic_path = !by_threshold(best);
        for (const auto& [j, pushed] : noise_pushes)
          if (j == best) noise_h.undo(pushed);
        accept(best, ectopic_path);
      }
    }
    const bool near = !beats.empty() && c.i - beats.back().i < refractory;
    if (!near && !t_like(c) && clears(ci, 1.0f)) {
      accept(ci, c.height <= threshold());
    } else if (near && c.height > beats.back().height && c.height > threshold()) {
      // The beat just taken was the onset (or P wave) of this bigger complex.
      beats.back() = c;
      beat_h.replace_last(c.height);
      beat_slow.replace_last(c.slow);
      if (beats.size() > 1) rr.replace_last(c.i - beats[beats.size() - 2].i);
      if (sinus_pushed_last) sinus_rr.replace_last(c.i - beats[beats.size() - 2].i);
      last_ectopic = false;
      since = ci + 1;
    } else if (!near) {
      if (noise_pushes.size() == 8) noise_pushes.erase(noise_pushes.begin());
      noise_pushes.emplace_back(ci, noise_h.push(c.height));
      ++noise_seen;
    }
  }
  return prune_split_intervals(beats);
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
