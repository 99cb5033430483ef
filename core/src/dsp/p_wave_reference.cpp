// Each beat's P wave against its record's late beats' (see p_wave_reference.h).
#include "hlm/dsp/p_wave_reference.h"

#include <algorithm>
#include <cmath>

#include "dsp/pearson.h"
#include "dsp/point_clock.h"
#include "hlm/dsp/template_descriptors.h"
#include "hlm/errors.h"

namespace hlm {

std::vector<size_t> late_beats(const std::vector<float>& rr_seconds,
                               const std::vector<int64_t>& row_of_beat) {
  std::vector<size_t> eligible;
  for (size_t i = 0; i < row_of_beat.size() && i < rr_seconds.size(); ++i)
    if (row_of_beat[i] >= 0 && rr_seconds[i] > 0) eligible.push_back(i);
  if (eligible.empty()) return {};
  const size_t keep =
      std::max<size_t>(1, size_t(std::ceil(kLateBeatShare * double(eligible.size()) - 1e-9)));
  std::stable_sort(eligible.begin(), eligible.end(),
                   [&](size_t a, size_t b) { return rr_seconds[a] > rr_seconds[b]; });
  eligible.resize(keep);
  std::sort(eligible.begin(), eligible.end());
  return eligible;
}

bool covers_p_wave(const dsp::BeatWindowOptions& window) {
  const dsp::PointClock clock(window);
  return window.points >= 2 && window.before_seconds >= -kPWaveSeconds[0] - 1e-9 &&
         clock.end(kPWaveSeconds[1]) - clock.first(kPWaveSeconds[0]) >= 3;
}

std::vector<float> late_p_wave_correlations(const float* windows,
                                            const dsp::BeatWindowOptions& window,
                                            const std::vector<int64_t>& row_of_beat,
                                            const std::vector<size_t>& late) {
  if (!covers_p_wave(window))
    throw InternalError(
        "late_p_wave_correlations: windows of {} points from -{} s do not cover the P wave "
        "({} s to {} s)",
        window.points, window.before_seconds, kPWaveSeconds[0], kPWaveSeconds[1]);
  const dsp::PointClock clock(window);
  const int p0 = clock.first(kPWaveSeconds[0]), p1 = clock.end(kPWaveSeconds[1]);
  const size_t dim = size_t(window.points), width = size_t(p1 - p0);
  std::vector<const float*> rows;
  for (const size_t i : late)
    if (i < row_of_beat.size() && row_of_beat[i] >= 0)
      rows.push_back(windows + size_t(row_of_beat[i]) * dim + p0);
  std::vector<float> out(row_of_beat.size(), 1.0f);
  if (rows.empty()) return out;
  std::vector<float> reference(width), column(rows.size());
  for (size_t j = 0; j < width; ++j) {
    for (size_t k = 0; k < rows.size(); ++k) column[k] = rows[k][j];
    const auto mid = column.begin() + ptrdiff_t(column.size() / 2);
    std::nth_element(column.begin(), mid, column.end());
    reference[j] = *mid;
  }
  for (size_t i = 0; i < row_of_beat.size(); ++i)
    if (row_of_beat[i] >= 0)
      out[i] = float(dsp::pearson_correlation(windows + size_t(row_of_beat[i]) * dim + p0,
                                              reference.data(), width));
  return out;
}

std::string late_p_wave_descriptor_name(int lead) {
  const std::string name = "P wave: correlation with the late beats' median P wave";
  return lead == 0 ? name : name + ", lead " + std::to_string(lead + 1);
}

}  // namespace hlm
