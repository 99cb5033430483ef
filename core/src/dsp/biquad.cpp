// Butterworth sections and the zero-phase cascade (see biquad.h).
#include "dsp/biquad.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hlm/errors.h"
#include "util/target_clones.h"

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

constexpr size_t kMaxSections = 4;
constexpr size_t kLanes = 8;
using Four = double __attribute__((vector_size(4 * sizeof(double))));
using FourFloats = float __attribute__((vector_size(4 * sizeof(float))));

struct State {
  double z1 = 0, z2 = 0;
};

// Steady state of one section for a constant input: what it would hold after forever.
State steady_state(const Biquad& s, double input) {
  const double y = input * s.dc_gain();
  State st;
  st.z2 = s.b2 * input - s.a2 * y;
  st.z1 = y - s.b0 * input;
  return st;
}

// Each section's state settled on a constant input `level` (what the first sample becomes
// at that section), so a pass starts without a step.
void settle(const std::vector<Biquad>& sections, double level, double* z1, double* z2) {
  for (size_t s = 0; s < sections.size() && s < kMaxSections; ++s) {
    const State st = steady_state(sections[s], level);
    z1[s] = st.z1;
    z2[s] = st.z2;
    level *= sections[s].dc_gain();
  }
}

// Where a pass reads: a signal of doubles, or the float signal with `pad` samples of odd
// reflection about each end value (the forward pass, which so needs no padded copy). The
// reflected values are computed as a padded copy would hold them, so the bits are the same.
struct Doubles {
  const double* p;
  double at(size_t i) const { return p[i]; }
  bool whole(size_t) const { return true; }  // four values from i on can be read as a block
  __attribute__((always_inline)) void four(size_t i, Four& v) const {
    std::memcpy(&v, p + i, sizeof v);
  }
};

struct PaddedFloats {
  const float* x;
  size_t n, pad;
  double at(size_t i) const {
    if (i < pad) return 2.0 * double(x[0]) - double(x[pad - i]);
    if (i < pad + n) return x[i - pad];
    return 2.0 * double(x[n - 1]) - double(x[n - 2 - (i - pad - n)]);
  }
  bool whole(size_t i) const { return i >= pad && i + 4 <= pad + n; }
  __attribute__((always_inline)) void four(size_t i, Four& v) const {
    FourFloats f;
    std::memcpy(&f, x + (i - pad), sizeof f);
    v = __builtin_convertvector(f, Four);
  }
};

// Where a pass writes: a signal of doubles, or the float signal without its padding (the
// backward pass, whose output is the filter's).
struct DoublesOut {
  double* p;
  void put(size_t i, double v) const { p[i] = v; }
  bool whole(size_t) const { return true; }
  __attribute__((always_inline)) void four(size_t i, const Four& v) const {
    std::memcpy(p + i, &v, sizeof v);
  }
};

struct UnpaddedFloats {
  float* out;
  size_t n, pad;
  void put(size_t i, double v) const {
    if (i >= pad && i < pad + n) out[i - pad] = static_cast<float>(v);
  }
  bool whole(size_t i) const { return i >= pad && i + 4 <= pad + n; }
  __attribute__((always_inline)) void four(size_t i, const Four& v) const {
    const FourFloats f = __builtin_convertvector(v, FourFloats);
    std::memcpy(out + (i - pad), &f, sizeof f);
  }
};

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

// One pass of the cascade, forward or backward, over positions [0, m) from `in` to `out`, one
// sample after another. All sections run in one loop so that their recursions, each bound by
// its own latency, overlap.
template <class In, class Out>
void run_pass(const std::vector<Biquad>& sections, const In& in, const Out& out, size_t m,
              bool backward) {
  const size_t k = std::min(sections.size(), kMaxSections);
  auto at = [&](size_t t) { return backward ? m - 1 - t : t; };
  double z1[kMaxSections], z2[kMaxSections];
  settle(sections, in.at(at(0)), z1, z2);
  for (size_t t = 0; t < m; ++t) out.put(at(t), through(sections, k, z1, z2, in.at(at(t))));
}

// Four lanes' values at four steps, lane by lane, turned into the four steps' values across
// the lanes (a 4 x 4 transpose), or back.
inline __attribute__((always_inline)) void transpose(Four& a, Four& b, Four& c, Four& d) {
  const Four ab_even = __builtin_shufflevector(a, b, 0, 4, 2, 6);
  const Four ab_odd = __builtin_shufflevector(a, b, 1, 5, 3, 7);
  const Four cd_even = __builtin_shufflevector(c, d, 0, 4, 2, 6);
  const Four cd_odd = __builtin_shufflevector(c, d, 1, 5, 3, 7);
  a = __builtin_shufflevector(ab_even, cd_even, 0, 1, 4, 5);
  b = __builtin_shufflevector(ab_odd, cd_odd, 0, 1, 4, 5);
  c = __builtin_shufflevector(ab_even, cd_even, 2, 3, 6, 7);
  d = __builtin_shufflevector(ab_odd, cd_odd, 2, 3, 6, 7);
}

inline __attribute__((always_inline)) void reverse(Four& v) {
  v = __builtin_shufflevector(v, v, 3, 2, 1, 0);
}

// The same pass as kLanes segments of the signal side by side, for long signals. A
// recursive filter's output depends on all the input before it, but that dependence fades
// as the slowest pole's radius to the power of the distance: a segment started `warmup`
// samples early, settled on its first input, has forgotten its start (to 1e-12 of the
// signal, far below float precision) when its own samples begin. The segments' recursions
// are independent, so they fill the vector lanes and the pipeline that a single recursion,
// bound by its latency, leaves idle. K sections, known when compiling, keep every state in
// registers. Results do not depend on which clone runs: the file is built without
// floating-point contraction.
template <size_t K, class In, class Out>
inline __attribute__((always_inline)) void run_pass_lanes_of(const std::vector<Biquad>& sections,
                                                             const In& in, const Out& out, size_t m,
                                                             bool backward, size_t warmup) {
  // Four lanes to a vector register (AVX2), kGroups of them: two independent groups overlap
  // their latencies.
  constexpr size_t kGroups = kLanes / 4;
  const size_t len = m / kLanes;  // lane j writes [j len, (j + 1) len); the last lane the rest
  // Step i of lane j is at position j len + i - warmup of the pass (counted in its own
  // direction); lane 0 idles on its first sample until its positions begin.
  auto at = [&](size_t t) { return backward ? m - 1 - t : t; };
  auto step_of = [&](size_t j, size_t i) { return ptrdiff_t(j * len + i) - ptrdiff_t(warmup); };
  Four z1[K][kGroups], z2[K][kGroups], b0[K], b1[K], b2[K], a1[K], a2[K];
  for (size_t s = 0; s < K; ++s) {
    b0[s] = Four{} + sections[s].b0, b1[s] = Four{} + sections[s].b1;
    b2[s] = Four{} + sections[s].b2, a1[s] = Four{} + sections[s].a1;
    a2[s] = Four{} + sections[s].a2;
  }
  for (size_t j = 0; j < kLanes; ++j) {
    double s1[kMaxSections], s2[kMaxSections];
    settle(sections, in.at(at(size_t(std::max<ptrdiff_t>(step_of(j, 0), 0)))), s1, s2);
    for (size_t s = 0; s < K; ++s) z1[s][j / 4][j % 4] = s1[s], z2[s][j / 4][j % 4] = s2[s];
  }
  // Four steps at a time: each lane's four values are read as one block where they can be
  // and turned across the lanes; in a block where one lane's cannot (lane 0 idling, the
  // signal's ends), every lane's value one by one.
  const size_t steps = warmup + len;
  // A block of the pass's positions t..t+3 lies at t.. forward and at m - 4 - t.. backward.
  auto block = [&](size_t j, size_t i0) {
    return backward ? m - 4 - size_t(step_of(j, i0)) : size_t(step_of(j, i0));
  };
  auto whole = [&](size_t i0) {
    if (i0 + 4 > steps || i0 < warmup) return false;
    for (size_t j = 0; j < kLanes; ++j)
      if (!in.whole(block(j, i0)) || !out.whole(block(j, i0))) return false;
    return true;
  };
  // Each lane's blocks are whole over one stretch of steps (its positions move one way, and
  // only the ends of the signal are read or written one by one), so all lanes' are too:
  // found from both ends, not checked at every step.
  const size_t last = (steps / 4) * 4;
  size_t whole_from = 0, whole_to = last;
  while (whole_from < last && !whole(whole_from)) whole_from += 4;
  while (whole_to > whole_from && !whole(whole_to - 4)) whole_to -= 4;
  for (size_t i0 = 0; i0 < steps; i0 += 4) {
    const size_t nb = std::min<size_t>(4, steps - i0);
    const bool whole_block = i0 >= whole_from && i0 < whole_to;
    Four v[kGroups][4];  // v[g][b]: lanes 4g..4g+3 at step i0 + b
    for (size_t g = 0; g < kGroups; ++g) {
      if (whole_block) {
        Four* w = v[g];
        for (size_t l = 0; l < 4; ++l) {
          in.four(block(4 * g + l, i0), w[l]);
          if (backward) reverse(w[l]);
        }
        transpose(w[0], w[1], w[2], w[3]);
      } else {
        for (size_t b = 0; b < nb; ++b)
          for (size_t l = 0; l < 4; ++l)
            v[g][b][l] = in.at(at(size_t(std::max<ptrdiff_t>(step_of(4 * g + l, i0 + b), 0))));
      }
    }
    for (size_t b = 0; b < nb; ++b)
      for (size_t g = 0; g < kGroups; ++g) {
        Four x = v[g][b];
        for (size_t s = 0; s < K; ++s) {
          const Four y = b0[s] * x + z1[s][g];
          z1[s][g] = b1[s] * x - a1[s] * y + z2[s][g];
          z2[s][g] = b2[s] * x - a2[s] * y;
          x = y;
        }
        v[g][b] = x;
      }
    for (size_t g = 0; g < kGroups; ++g) {
      if (whole_block) {
        Four* w = v[g];
        transpose(w[0], w[1], w[2], w[3]);
        for (size_t l = 0; l < 4; ++l) {
          if (backward) reverse(w[l]);
          out.four(block(4 * g + l, i0), w[l]);
        }
      } else {
        for (size_t b = 0; b < nb; ++b)  // nothing of a lane's own positions before warmup
          for (size_t l = 0; l < 4 && i0 + b >= warmup; ++l)
            out.put(at(size_t(step_of(4 * g + l, i0 + b))), v[g][b][l]);
      }
    }
  }
  // The last lane goes on alone over the few samples that did not divide evenly.
  double s1[K], s2[K];
  for (size_t s = 0; s < K; ++s) s1[s] = z1[s][kGroups - 1][3], s2[s] = z2[s][kGroups - 1][3];
  for (size_t t = kLanes * len; t < m; ++t)
    out.put(at(t), through(sections, K, s1, s2, in.at(at(t))));
}

template <class In, class Out>
inline __attribute__((always_inline)) void run_pass_lanes(const std::vector<Biquad>& sections,
                                                          const In& in, const Out& out, size_t m,
                                                          bool backward, size_t warmup) {
  switch (sections.size()) {
    case 1:
      return run_pass_lanes_of<1>(sections, in, out, m, backward, warmup);
    case 2:
      return run_pass_lanes_of<2>(sections, in, out, m, backward, warmup);
    case 3:
      return run_pass_lanes_of<3>(sections, in, out, m, backward, warmup);
    default:
      return run_pass_lanes_of<kMaxSections>(sections, in, out, m, backward, warmup);
  }
}

// The two passes of filtfilt as lanes, one clone per instruction set each.
HLM_VECTOR_CLONES
void forward_lanes(const std::vector<Biquad>& sections, const PaddedFloats& in, double* out,
                   size_t m, size_t warmup) {
  run_pass_lanes(sections, in, DoublesOut{out}, m, false, warmup);
}

HLM_VECTOR_CLONES
void backward_lanes(const std::vector<Biquad>& sections, const double* in,
                    const UnpaddedFloats& out, size_t m, size_t warmup) {
  run_pass_lanes(sections, Doubles{in}, out, m, true, warmup);
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

// Lanes pay off when the warm-up is a small part of each lane's segment.
bool lanes_pay(const std::vector<Biquad>& sections, size_t m, size_t warmup) {
  return !sections.empty() && sections.size() <= kMaxSections && warmup != SIZE_MAX &&
         m >= kLanes * 8 * warmup;
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
    forward_lanes(sections, padded, forward.data(), m, warmup);
    backward_lanes(sections, forward.data(), unpadded, m, warmup);
  } else {
    run_pass(sections, padded, DoublesOut{forward.data()}, m, false);
    run_pass(sections, Doubles{forward.data()}, unpadded, m, true);
  }
}

}  // namespace hlm::dsp
