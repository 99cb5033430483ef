// Beats aligned to their record's template (see fiducial_alignment.h).
#include "hlm/dsp/fiducial_alignment.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "hlm/dsp/beat_morphology.h"
#include "util/target_clones.h"

namespace hlm::dsp {

namespace {

// Work space of lag_correlations, sized once per record.
struct LagSums {
  std::vector<double> mean, cov, energy;
  explicit LagSums(size_t lags) : mean(lags), cov(lags), energy(lags) {}
};

// out[k], k < lags: the Pearson correlation of x[k, k + len) with a template whose mean is
// already removed and whose sum of squares is t_energy; -2 where that stretch is flat. Every
// lag's sums run over j in order, as one lag alone would; the lags side by side make the
// vector lanes (the file is built without FP contraction, so every clone gives these bits).
HLM_VECTOR_CLONES
void lag_correlations(const float* __restrict x, size_t lags, const std::vector<double>& centred,
                      double t_energy, LagSums& s, double* __restrict out) {
  const size_t len = centred.size();
  double* __restrict mean = s.mean.data();
  double* __restrict cov = s.cov.data();
  double* __restrict energy = s.energy.data();
  for (size_t k = 0; k < lags; ++k) mean[k] = 0, cov[k] = 0, energy[k] = 0;
  for (size_t j = 0; j < len; ++j)
    for (size_t k = 0; k < lags; ++k) mean[k] += x[k + j];
  for (size_t k = 0; k < lags; ++k) mean[k] /= double(len);
  for (size_t j = 0; j < len; ++j) {
    const double t = centred[j];
    for (size_t k = 0; k < lags; ++k) {
      const double v = x[k + j] - mean[k];
      cov[k] += v * t;
      energy[k] += v * v;
    }
  }
  for (size_t k = 0; k < lags; ++k)
    out[k] = energy[k] > 0 ? cov[k] / std::sqrt(energy[k] * t_energy) : -2.0;
}

}  // namespace

std::vector<int64_t> align_r_peaks(const float* x, size_t n, double sampling_hz,
                                   const std::vector<int64_t>& r_peaks, double max_shift_s,
                                   bool leave_out_premature) {
  const int64_t shift = int64_t(std::lround(std::max(0.0, max_shift_s) * sampling_hz));
  const int64_t half = int64_t(std::lround(kQrsHalfWidthSeconds * sampling_hz));
  if (shift == 0 || r_peaks.empty() || half < 1) return r_peaks;
  const int len = int(2 * half + 1);
  // The QRS of every beat far enough from the ends for any lag; the others have no row and
  // keep their peak (local_templates leaves them out of their neighbours' templates).
  const auto fits = [&](int64_t r) {
    return r - half - shift >= 0 && r + half + shift < int64_t(n);
  };
  std::vector<float> qrs;
  std::vector<int64_t> row(r_peaks.size(), -1);
  for (size_t i = 0; i < r_peaks.size(); ++i) {
    if (!fits(r_peaks[i])) continue;
    row[i] = int64_t(qrs.size() / size_t(len));
    qrs.insert(qrs.end(), x + (r_peaks[i] - half), x + (r_peaks[i] + half + 1));
  }
  std::vector<bool> premature;
  if (leave_out_premature) {
    std::vector<double> rr(r_peaks.size(), 0.0);
    for (size_t i = 1; i < r_peaks.size(); ++i) rr[i] = double(r_peaks[i] - r_peaks[i - 1]);
    premature = premature_beats(rr);
  }
  const std::vector<float> templates = local_templates(qrs.data(), len, row, premature);

  std::vector<int64_t> aligned(r_peaks);
  std::vector<double> t(static_cast<size_t>(len));
  const size_t lags = size_t(2 * shift + 1);
  LagSums sums(lags);
  std::vector<double> by_lag(lags);  // by_lag[shift + lag]
  for (size_t i = 0; i < r_peaks.size(); ++i) {
    if (row[i] < 0) continue;
    const float* tpl = templates.data() + i * size_t(len);
    double mean = 0, t_energy = 0;
    for (int j = 0; j < len; ++j) mean += tpl[j];
    mean /= len;
    for (int j = 0; j < len; ++j)
      t[size_t(j)] = tpl[j] - mean, t_energy += t[size_t(j)] * t[size_t(j)];
    if (t_energy <= 0) continue;
    // A beat never moves to or past its neighbours: after the previous beat's aligned peak
    // and before the next beat's detected one, so the order stays as detected.
    const int64_t after = i > 0 ? aligned[i - 1] : INT64_MIN;
    const int64_t before = i + 1 < r_peaks.size() ? r_peaks[i + 1] : INT64_MAX;
    lag_correlations(x + (r_peaks[i] - half - shift), lags, t, t_energy, sums, by_lag.data());
    int64_t best_lag = 0;
    double best = by_lag[size_t(shift)];
    if (best < -1) continue;  // a flat QRS (a clipped or dead stretch): nothing to match
    // Ties go to the smallest move (lag 0 first, then outwards), so a beat that matches its
    // template equally well anywhere stays where the detector put it.
    for (int64_t step = 1; step <= shift; ++step)
      for (int64_t lag : {-step, step}) {
        const int64_t r = r_peaks[i] + lag;
        if (r <= after || r >= before) continue;
        const double c = by_lag[size_t(shift + lag)];
        if (c > best) best = c, best_lag = lag;
      }
    aligned[i] = r_peaks[i] + best_lag;
  }
  return aligned;
}

}  // namespace hlm::dsp
