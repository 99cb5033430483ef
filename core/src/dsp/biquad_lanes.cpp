// The cascade's passes as segments side by side (see biquad_lanes.h). A recursive filter's
// output depends on all the input before it, but that dependence fades as the slowest pole's
// radius to the power of the distance: a segment started `warmup` samples early, settled on its
// first input, has forgotten its start (to 1e-12 of the signal, far below float precision) when
// its own samples begin. The segments' recursions are independent, so they fill the vector
// lanes and the pipeline that a single recursion, bound by its latency, leaves idle.
//
// Between the passes the signal is held step by step (row i: every lane's value at its step i),
// so the backward pass reads a row as two vectors; the float input and output are turned across
// the lanes in blocks of 16 steps. Results do not depend on which clone runs: the file is built
// without floating-point contraction.
#include "dsp/biquad_lanes.h"

#include <algorithm>
#include <cstring>

#include "dsp/transpose16.h"
#include "util/target_clones.h"

// The helpers below take and return 64-byte vectors, which the default instruction set passes
// differently from AVX-512's; each is inlined into the clones, so no call crosses that ABI.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace hlm::dsp::biquad {

namespace {
static_assert(kLanes == 16, "a row is two vectors of eight doubles, a block 16 x 16 floats");
constexpr size_t kBlock = 16;  // steps turned across the lanes at once
using Eight = double __attribute__((vector_size(8 * sizeof(double))));

#define HLM_INLINE inline __attribute__((always_inline))

HLM_INLINE Eight widened(const Float8& v) { return __builtin_convertvector(v, Eight); }
HLM_INLINE Float8 narrowed(const Eight& v) { return __builtin_convertvector(v, Float8); }

// K sections over 16 lanes, as two vectors of eight (one AVX-512 register each, or two AVX2
// ones): the two overlap their latencies. K, known when compiling, keeps every state in
// registers.
template <size_t K>
struct Cascade {
  Eight b0[K], b1[K], b2[K], a1[K], a2[K];
  Eight z1[K][2], z2[K][2];

  explicit Cascade(const std::vector<Biquad>& sections) {
    for (size_t s = 0; s < K; ++s) {
      b0[s] = Eight{} + sections[s].b0, b1[s] = Eight{} + sections[s].b1;
      b2[s] = Eight{} + sections[s].b2, a1[s] = Eight{} + sections[s].a1;
      a2[s] = Eight{} + sections[s].a2;
    }
  }

  // Lane j's state, settled on `level`, or as given.
  void settle_lane(const std::vector<Biquad>& sections, size_t j, double level) {
    double s1[kMaxSections], s2[kMaxSections];
    settle(sections, level, s1, s2);
    set_lane(j, s1, s2);
  }
  void set_lane(size_t j, const double* s1, const double* s2) {
    for (size_t s = 0; s < K; ++s) z1[s][j / 8][j % 8] = s1[s], z2[s][j / 8][j % 8] = s2[s];
  }
  void get_lane(size_t j, double* s1, double* s2) const {
    for (size_t s = 0; s < K; ++s) s1[s] = z1[s][j / 8][j % 8], s2[s] = z2[s][j / 8][j % 8];
  }

  // Lanes 8h..8h+7 one step on: the arithmetic of through(), lane by lane.
  HLM_INLINE Eight step(size_t h, Eight x) {
    for (size_t s = 0; s < K; ++s) {
      const Eight y = b0[s] * x + z1[s][h];
      z1[s][h] = b1[s] * x - a1[s] * y + z2[s][h];
      z2[s][h] = b2[s] * x - a2[s] * y;
      x = y;
    }
    return x;
  }
};

template <size_t K>
struct Forward {
  static HLM_INLINE void run(const std::vector<Biquad>& sections, const PaddedFloats& in,
                             double* rows, double* tail, size_t m, size_t warmup);
};

template <size_t K>
struct Backward {
  static HLM_INLINE void run(const std::vector<Biquad>& sections, const double* rows,
                             const double* tail, const UnpaddedFloats& out, size_t m,
                             size_t warmup);
};

// Pass<K>::run with the number of sections made a constant, for the registers.
template <template <size_t> class Pass, class... Args>
HLM_INLINE void with_sections(size_t count, const Args&... args) {
  switch (count) {
    case 1:
      return Pass<1>::run(args...);
    case 2:
      return Pass<2>::run(args...);
    case 3:
      return Pass<3>::run(args...);
    default:
      return Pass<kMaxSections>::run(args...);
  }
}

template <size_t K>
HLM_INLINE void Forward<K>::run(const std::vector<Biquad>& sections, const PaddedFloats& in,
                                double* rows, double* tail, size_t m, size_t warmup) {
  const size_t len = m / kLanes, steps = warmup + len;
  // Lane j reads position j len + i - warmup at step i; lane 0 idles on its first sample until
  // its positions begin.
  auto position = [&](size_t j, size_t i) {
    return size_t(std::max<ptrdiff_t>(ptrdiff_t(j * len + i) - ptrdiff_t(warmup), 0));
  };
  Cascade<K> c(sections);
  for (size_t j = 0; j < kLanes; ++j) c.settle_lane(sections, j, in.at(position(j, 0)));
  // A lane's block of steps that lies inside the signal (not its padding, nor lane 0's idling)
  // is read as 16 floats; the blocks are turned across the lanes, and the other lanes' values
  // then read one by one.
  auto whole = [&](size_t j, size_t i0) {
    return i0 + kBlock <= steps && j * len + i0 >= warmup + in.pad &&
           position(j, i0 + kBlock - 1) < in.pad + in.n;
  };
  for (size_t i0 = 0; i0 < steps; i0 += kBlock) {
    const size_t nb = std::min(kBlock, steps - i0);
    Eight lo[kBlock], hi[kBlock];  // lanes 0-7 and 8-15 at step i0 + b
    Block16 r;  // row j: lane j's 16 steps; turned, row b: the lanes at step i0 + b
    for (size_t j = 0; j < kLanes; ++j)
      if (whole(j, i0)) {
        const float* x = in.x + (position(j, i0) - in.pad);
        std::memcpy(&r.lo[j], x, sizeof(Float8));
        std::memcpy(&r.hi[j], x + 8, sizeof(Float8));
      } else {
        r.lo[j] = r.hi[j] = Float8{};
      }
    transpose(r);
    for (size_t b = 0; b < kBlock; ++b) lo[b] = widened(r.lo[b]), hi[b] = widened(r.hi[b]);
    for (size_t j = 0; j < kLanes; ++j)
      if (!whole(j, i0))
        for (size_t b = 0; b < nb; ++b) {
          const double v = in.at(position(j, i0 + b));
          if (j < 8)
            lo[b][j] = v;
          else
            hi[b][j - 8] = v;
        }
    for (size_t b = 0; b < nb; ++b) {
      lo[b] = c.step(0, lo[b]);
      hi[b] = c.step(1, hi[b]);
      if (i0 + b < warmup) continue;
      double* row = rows + (i0 + b - warmup) * kLanes;
      std::memcpy(row, &lo[b], sizeof(Eight));
      std::memcpy(row + 8, &hi[b], sizeof(Eight));
    }
  }
  double s1[kMaxSections], s2[kMaxSections];
  c.get_lane(kLanes - 1, s1, s2);
  for (size_t t = kLanes * len; t < m; ++t)
    tail[t - kLanes * len] = through(sections, K, s1, s2, in.at(t));
}

template <size_t K>
HLM_INLINE void Backward<K>::run(const std::vector<Biquad>& sections, const double* rows,
                                 const double* tail, const UnpaddedFloats& out, size_t m,
                                 size_t warmup) {
  const size_t len = m / kLanes, split = kLanes * len;
  // The leftover positions, from the end, as the one recursion starts: the last lane's state.
  double e1[kMaxSections], e2[kMaxSections];
  settle(sections, m > split ? tail[m - 1 - split] : rows[(len - 1) * kLanes + kLanes - 1], e1, e2);
  for (size_t t = m; t-- > split;) out.put(t, through(sections, K, e1, e2, tail[t - split]));
  // Lane j < 15 warms up on the first `warmup` positions of segment j + 1, backward: row i
  // read one lane on. The last lane's value there is the next row's first (in the buffer, as
  // lanes_pay keeps warmup below len), and its state is set after.
  Cascade<K> c(sections);
  for (size_t j = 0; j + 1 < kLanes; ++j)
    c.settle_lane(sections, j, rows[(warmup - 1) * kLanes + j + 1]);
  for (size_t k = 0; k < warmup; ++k) {
    const double* row = rows + (warmup - 1 - k) * kLanes + 1;
    Eight lo, hi;
    std::memcpy(&lo, row, sizeof lo);
    std::memcpy(&hi, row + 8, sizeof hi);
    c.step(0, lo);
    c.step(1, hi);
  }
  c.set_lane(kLanes - 1, e1, e2);
  // Step k: row len - 1 - k, lane j at position j len + len - 1 - k. A block of steps is turned
  // across the lanes, its steps in reverse, and a lane whose block lies inside the signal (not
  // its padding) is stored as 16 floats; the others value by value.
  auto position = [&](size_t j, size_t k) { return j * len + len - 1 - k; };
  auto whole = [&](size_t j, size_t k0) {
    return k0 + kBlock <= len && position(j, k0 + kBlock - 1) >= out.pad &&
           position(j, k0) < out.pad + out.n;
  };
  for (size_t k0 = 0; k0 < len; k0 += kBlock) {
    const size_t nb = std::min(kBlock, len - k0);
    Block16 r = {};  // row 15 - b: the lanes at step k0 + b
    for (size_t b = 0; b < nb; ++b) {
      const double* row = rows + (len - 1 - k0 - b) * kLanes;
      Eight lo, hi;
      std::memcpy(&lo, row, sizeof lo);
      std::memcpy(&hi, row + 8, sizeof hi);
      r.lo[kBlock - 1 - b] = narrowed(c.step(0, lo));
      r.hi[kBlock - 1 - b] = narrowed(c.step(1, hi));
    }
    transpose(r);  // row j: lane j at steps k0 + 15 down to k0
    for (size_t j = 0; j < kLanes; ++j) {
      if (whole(j, k0)) {
        float* o = out.out + (position(j, k0 + kBlock - 1) - out.pad);
        std::memcpy(o, &r.lo[j], sizeof(Float8));
        std::memcpy(o + 8, &r.hi[j], sizeof(Float8));
        continue;
      }
      for (size_t b = 0; b < nb; ++b) {
        const size_t i = kBlock - 1 - b;
        out.put(position(j, k0 + b), i < 8 ? r.lo[j][i] : r.hi[j][i - 8]);
      }
    }
  }
}

}  // namespace

void settle(const std::vector<Biquad>& sections, double level, double* z1, double* z2) {
  for (size_t s = 0; s < sections.size() && s < kMaxSections; ++s) {
    const Biquad& b = sections[s];
    // The steady state for a constant input: what the section would hold after forever.
    const double y = level * b.dc_gain();
    z2[s] = b.b2 * level - b.a2 * y;
    z1[s] = y - b.b0 * level;
    level *= b.dc_gain();
  }
}

// Every pass is inlined into each instruction set's clone.
HLM_VECTOR_CLONES
void forward_lanes(const std::vector<Biquad>& sections, const PaddedFloats& in, double* rows,
                   double* tail, size_t m, size_t warmup) {
  with_sections<Forward>(sections.size(), sections, in, rows, tail, m, warmup);
}

HLM_VECTOR_CLONES
void backward_lanes(const std::vector<Biquad>& sections, const double* rows, const double* tail,
                    const UnpaddedFloats& out, size_t m, size_t warmup) {
  with_sections<Backward>(sections.size(), sections, rows, tail, out, m, warmup);
}

}  // namespace hlm::dsp::biquad
