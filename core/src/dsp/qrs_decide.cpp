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

// A ring of the last 8 values; the median is recomputed only when a value changes.
template <class T>
struct Recent {
  T v[8];
  size_t next = 0;
  T med;
  explicit Recent(T init) : med(init) { std::fill(v, v + 8, init); }
  void push(T x) {
    v[next++ % 8] = x;
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
  Recent<float> beat_h(0.6f), noise_h(0.02f);
  Recent<int64_t> rr(static_cast<int64_t>(0.8 * kRateHz));
  auto threshold = [&] {
    const float q = beat_h.median(), z = noise_h.median();
    return z + kThreshold * (q - z);
  };
  std::vector<Candidate> beats;
  size_t since = 0;  // first candidate after the last beat
  auto t_like = [&](const Candidate& c) {
    return !beats.empty() && c.i - beats.back().i < t_wave &&
           c.slope < kTWaveSlope * beats.back().slope && c.height < kTWaveHeight * beat_h.median();
  };
  auto accept = [&](size_t ci) {
    if (!beats.empty()) rr.push(cand[ci].i - beats.back().i);
    beat_h.push(cand[ci].height);
    beats.push_back(cand[ci]);
    since = ci + 1;
  };
  for (size_t ci = 0; ci < cand.size(); ++ci) {
    const Candidate& c = cand[ci];
    if (!beats.empty() && c.i - beats.back().i > options.search_back_rr * rr.mean()) {
      const float low = kSearchBack * threshold();
      size_t best = cand.size();
      for (size_t j = since; j < ci; ++j)
        if (cand[j].i - beats.back().i >= refractory && c.i - cand[j].i >= refractory &&
            cand[j].height > low && !t_like(cand[j]) &&
            (best == cand.size() || cand[j].height > cand[best].height))
          best = j;
      if (best != cand.size()) accept(best);
    }
    const bool near = !beats.empty() && c.i - beats.back().i < refractory;
    if (!near && !t_like(c) && c.height > threshold()) {
      accept(ci);
    } else if (near && c.height > beats.back().height && c.height > threshold()) {
      // The beat just taken was the onset (or P wave) of this bigger complex.
      beats.back() = c;
      beat_h.replace_last(c.height);
      if (beats.size() > 1) rr.replace_last(c.i - beats[beats.size() - 2].i);
      since = ci + 1;
    } else if (!near) {
      noise_h.push(c.height);
    }
  }
  return prune_split_intervals(beats);
}

std::vector<Candidate> prune_split_intervals(const std::vector<Candidate>& beats) {
  constexpr size_t kHalf = 5;  // neighbours on each side that set the local norms
  std::vector<Candidate> out;
  std::vector<float> h, rr;
  for (size_t j = 0; j < beats.size(); ++j) {
    if (j == 0 || j + 1 == beats.size()) {
      out.push_back(beats[j]);
      continue;
    }
    // Cheap test first: the split test needs the next beat 1.14 times higher than this one.
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
    const float before = float(beats[j].i - beats[j - 1].i) / r;
    const float after = float(beats[j + 1].i - beats[j].i) / r;
    const bool split = beats[j].height < 0.7f * level && before < 0.8f && before + after < 1.1f &&
                       beats[j + 1].height >= 0.8f * level;
    if (!split) out.push_back(beats[j]);
  }
  return out;
}

}  // namespace hlm::dsp::qrs
