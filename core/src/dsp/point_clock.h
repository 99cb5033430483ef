// Where seconds from the R peak fall among a beat window's points (hlm/dsp/beat_window.h).
#pragma once
#include <algorithm>
#include <cmath>

#include "hlm/dsp/beat_window.h"

namespace hlm::dsp {

struct PointClock {
  double per_second = 0, r = 0;
  int points = 0;
  explicit PointClock(const BeatWindowOptions& w)
      : per_second((w.points - 1) / (w.before_seconds + w.after_seconds)),
        r(w.before_seconds * per_second),
        points(w.points) {}
  // The points from from_s to to_s: [first, end).
  int first(double from_s) const {
    return std::clamp(int(std::ceil(r + from_s * per_second - 1e-9)), 0, points);
  }
  int end(double to_s) const {
    return std::clamp(int(std::floor(r + to_s * per_second + 1e-9)) + 1, 0, points);
  }
};

}  // namespace hlm::dsp
