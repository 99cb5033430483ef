// The passes of the zero-phase cascade (biquad.h's filtfilt): the pieces both the one
// recursion and the lanes read, and the lanes, which filter a long signal as kLanes segments
// side by side (biquad_lanes.cpp).
#pragma once
#include <cstddef>
#include <vector>

#include "dsp/biquad.h"

namespace hlm::dsp::biquad {

constexpr size_t kMaxSections = 4;
constexpr size_t kLanes = 16;

// Each section's state settled on a constant input `level` (what the first sample becomes
// at that section), so a pass starts without a step.
void settle(const std::vector<Biquad>& sections, double level, double* z1, double* z2);

// One sample v through the first k sections, whose states z1, z2 move on by one sample.
inline double through(const std::vector<Biquad>& sections, size_t k, double* z1, double* z2,
                      double v) {
  for (size_t s = 0; s < k; ++s) {
    const Biquad& b = sections[s];
    const double y = b.b0 * v + z1[s];
    z1[s] = b.b1 * v - b.a1 * y + z2[s];
    z2[s] = b.b2 * v - b.a2 * y;
    v = y;
  }
  return v;
}

// The forward pass's input: the float signal with `pad` samples of odd reflection about each
// end value, computed as a padded copy would hold them, so the bits are the same.
struct PaddedFloats {
  const float* x;
  size_t n, pad;
  double at(size_t i) const {
    if (i < pad) return 2.0 * double(x[0]) - double(x[pad - i]);
    if (i < pad + n) return x[i - pad];
    return 2.0 * double(x[n - 1]) - double(x[n - 2 - (i - pad - n)]);
  }
};

// The backward pass's output, the filter's: the float signal without its padding.
struct UnpaddedFloats {
  float* out;
  size_t n, pad;
  void put(size_t i, double v) const {
    if (i >= pad && i < pad + n) out[i - pad] = static_cast<float>(v);
  }
};

// The forward pass over padded positions [0, m) as lanes: lane j filters segment j, positions
// [j len, (j + 1) len) with len = m / kLanes, after `warmup` positions before it; the last lane
// goes on over the positions left over. Writes rows[i kLanes + j] = the pass at j len + i, and
// tail[t] = the pass at kLanes len + t (fewer than kLanes values).
void forward_lanes(const std::vector<Biquad>& sections, const PaddedFloats& in, double* rows,
                   double* tail, size_t m, size_t warmup);

// The backward pass over forward_lanes's output: lane j filters segment j from its end, after
// `warmup` positions of segment j + 1; the last lane after the leftover positions, which it
// filters first as the one recursion would.
void backward_lanes(const std::vector<Biquad>& sections, const double* rows, const double* tail,
                    const UnpaddedFloats& out, size_t m, size_t warmup);

}  // namespace hlm::dsp::biquad
