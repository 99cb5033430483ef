// Butterworth sections and the zero-phase cascade (see biquad.h).
#include "dsp/biquad.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "dsp/biquad_lanes.h"
#include "hlm/errors.h"

namespace hlm::dsp {

namespace {
constexpr double kPi = 3.14159265358979323846;

// Prewarped bilinear transform of a second-order Butterworth prototype.
Biquad butterworth(double sampling_hz, double cutoff_hz, bool high) {
  const double k = std::tan(kPi * cutoff_hz / sampling_hz);
  const double norm = 1.0 / (1.0 + std::sqrt(2.0) * k + k * k);
  Biquad s;
  s.b0 = high ? norm : k * k * norm;
  s.b1 = high ? -2.0 * s.b0 : 2.0 * s.b0;
  s.b2 = s.b0;
  s.a1 = 2.0 * (k * k - 1.0) * norm;
  s.a2 = (1.0 - std::sqrt(2.0) * k + k * k) * norm;
  return s;
}

using biquad::kLanes;
using biquad::kMaxSections;
using biquad::PaddedFloats;
using biquad::UnpaddedFloats;

// The one recursion's signal of doubles between its passes.
struct Doubles {
  const double* p;
  double at(size_t i) const { return p[i]; }
};

struct DoublesOut {
  double* p;
  void put(size_t i, double v) const { p[i] = v; }
};

// One pass of the cascade, forward or backward, over positions [0, m) from `in` to `out`, one
// sample after another. All sections run in one loop so that their recursions, each bound by
// its own latency, overlap.
template <class In, class Out>
void run_pass(const std::vector<Biquad>& sections, const In& in, const Out& out, size_t m,
              bool backward) {
  const size_t k = std::min(sections.size(), kMaxSections);
  auto at = [&](size_t t) { return backward ? m - 1 - t : t; };
  double z1[kMaxSections], z2[kMaxSections];
  biquad::settle(sections, in.at(at(0)), z1, z2);
  for (size_t t = 0; t < m; ++t) out.put(at(t), biquad::through(sections, k, z1, z2, in.at(at(t))));
}

// Samples after which the cascade has forgotten its initial state to `tolerance`: its
// slowest pole's radius r (roots of z^2 + a1 z + a2) gives r^n = tolerance.
size_t memory_samples(const std::vector<Biquad>& sections, double tolerance) {
  double r = 0.0;
  for (const Biquad& b : sections) {
    const double disc = b.a1 * b.a1 - 4.0 * b.a2;
    const double radius = disc < 0 ? std::sqrt(b.a2) : 0.5 * (std::fabs(b.a1) + std::sqrt(disc));
    r = std::max(r, radius);
  }
  if (r >= 1.0) return SIZE_MAX;  // not stable: only the one-pass recursion is right
  if (r <= 0.0) return 1;
  return static_cast<size_t>(std::ceil(std::log(tolerance) / std::log(r)));
}

// Lanes pay off when the warm-up is a small part of each lane's segment. The backward pass also
// needs it shorter than a segment: its warm-up reads the segment after each lane's.
bool lanes_pay(const std::vector<Biquad>& sections, size_t m, size_t warmup) {
  return !sections.empty() && sections.size() <= kMaxSections && warmup != SIZE_MAX &&
         m >= kLanes * 4 * warmup;
}
}  // namespace

Biquad butterworth_lowpass(double sampling_hz, double cutoff_hz) {
  return butterworth(sampling_hz, cutoff_hz, false);
}
Biquad butterworth_highpass(double sampling_hz, double cutoff_hz) {
  return butterworth(sampling_hz, cutoff_hz, true);
}

void filtfilt(const std::vector<Biquad>& sections, const float* x, size_t n, size_t pad_samples,
              float* out, bool allow_lanes) {
  if (n == 0) return;
  if (sections.size() > kMaxSections)
    throw InternalError("filtfilt: {} sections, at most {} in one cascade", sections.size(),
                        kMaxSections);
  // Odd reflection about the end values keeps the level and the slope continuous.
  const PaddedFloats padded{x, n, std::min(pad_samples, n - 1)};
  const UnpaddedFloats unpadded{out, n, padded.pad};
  const size_t m = n + 2 * padded.pad;
  // Reused per thread: fresh pages for a signal-long buffer cost as much as the filter.
  thread_local std::vector<double> forward;
  forward.resize(m);
  const size_t warmup = memory_samples(sections, 1e-12);
  if (allow_lanes && lanes_pay(sections, m, warmup)) {
    double tail[kLanes];
    biquad::forward_lanes(sections, padded, forward.data(), tail, m, warmup);
    biquad::backward_lanes(sections, forward.data(), tail, unpadded, m, warmup);
  } else {
    run_pass(sections, padded, DoublesOut{forward.data()}, m, false);
    run_pass(sections, Doubles{forward.data()}, unpadded, m, true);
  }
}

}  // namespace hlm::dsp
