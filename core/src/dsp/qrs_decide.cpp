// Adaptive-threshold decision over QRS candidates (see qrs_decide.h).
#include "dsp/qrs_decide.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hlm::dsp::qrs {
static double kDbgA0() { return getenv("DBGA") ? atof(getenv("DBGA")) : -1; }
static double kDbgB0() { return getenv("DBGB") ? atof(getenv("DBGB")) : -1; }

std::vector<Candidate> decide(const std::vector<Candidate>& cand, const QrsOptions& options) {
  const int64_t refractory = std::llround(options.refractory_seconds * kRateHz);
  const int64_t t_wave = std::llround(options.t_wave_seconds * kRateHz);
  // The envelope is normalised to a QRS level near 1, which seeds the running estimates.
  std::vector<float> qrs_h(8, 0.6f), noise_h(8, 0.02f);
  std::vector<int64_t> rr(8, static_cast<int64_t>(0.8 * kRateHz));
  size_t qi = 0, ni = 0, ri = 0;
  auto threshold = [&] {
    const float q = median(qrs_h), z = median(noise_h);
    static const float kTh = getenv("TH") ? atof(getenv("TH")) : 0.35f;
    return z + kTh * (q - z);
  };
  std::vector<Candidate> beats;
  size_t since = 0;  // first candidate after the last beat
  auto accept = [&](size_t ci) {
    if (!beats.empty()) rr[ri++ % 8] = cand[ci].i - beats.back().i;
    qrs_h[qi++ % 8] = cand[ci].height;
    beats.push_back(cand[ci]);
    since = ci + 1;
  };
  for (size_t ci = 0; ci < cand.size(); ++ci) {
    const Candidate& c = cand[ci];
    if (!beats.empty()) {
      double rr_mean = 0.0;
      for (int64_t v : rr) rr_mean += double(v) / 8.0;
      if (c.i - beats.back().i > options.search_back_rr * rr_mean) {
        const float th2 = 0.5f * threshold();
        size_t best = cand.size();
        for (size_t j = since; j < ci; ++j)
          if (cand[j].i - beats.back().i >= refractory && c.i - cand[j].i >= refractory &&
              !(cand[j].i - beats.back().i < t_wave && cand[j].slope < 0.5f * beats.back().slope) &&
              cand[j].height > th2 && (best == cand.size() || cand[j].height > cand[best].height))
            best = j;
        if (best != cand.size() && cand[best].i / kRateHz >= kDbgA0() && cand[best].i / kRateHz <= kDbgB0()) fprintf(stderr, "searchback %.2f\n", cand[best].i / kRateHz);
        if (best != cand.size()) accept(best);
      }
    }
    const bool near = !beats.empty() && c.i - beats.back().i < refractory;
    static const float kTH = getenv("TQH") ? atof(getenv("TQH")) : 0.6f;
    const bool t_like = !beats.empty() && c.i - beats.back().i < t_wave &&
                        c.slope < 0.5f * beats.back().slope && c.height < kTH * median(qrs_h);
    static const double kDbgA = getenv("DBGA") ? atof(getenv("DBGA")) : -1, kDbgB = getenv("DBGB") ? atof(getenv("DBGB")) : -1;
    if (c.i / kRateHz >= kDbgA && c.i / kRateHz <= kDbgB)
      fprintf(stderr, "cand t=%.2f h=%.3f slope=%.3f th=%.3f near=%d t_like=%d last_slope=%.3f\n", c.i / kRateHz, c.height, c.slope, threshold(), near, t_like, beats.empty() ? 0.f : beats.back().slope);
    if (!near && !t_like && c.height > threshold()) {
      accept(ci);
    } else if (near && c.height > beats.back().height && c.height > threshold()) {
      // A bigger peak right after a beat: the beat was its P wave or onset; take the peak.
      beats.pop_back();
      qrs_h[(qi - 1) % 8] = c.height;
      if (!beats.empty()) rr[(ri - 1) % 8] = c.i - beats.back().i;
      beats.push_back(c);
      since = ci + 1;
    } else if (!near) {
      noise_h[ni++ % 8] = c.height;
    }
  }
  return beats;
}

}  // namespace hlm::dsp::qrs
