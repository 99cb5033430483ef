// Butterworth sections and the zero-phase cascade (see biquad.h).
#include "dsp/biquad.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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

// One pass of the cascade, forward or backward, from in[0, m) into out[0, m) (which may be
// the same), one sample after another. All sections run in one loop so that their
// recursions, each bound by its own latency, overlap.
void run_pass(const std::vector<Biquad>& sections, const double* in, double* out, size_t m,
              bool backward) {
  if (sections.size() > kMaxSections) {  // rare: run the sections one after another
    run_pass({sections[0]}, in, out, m, backward);
    for (size_t s = 1; s < sections.size(); ++s) run_pass({sections[s]}, out, out, m, backward);
    return;
  }
  const size_t k = sections.size();
  const ptrdiff_t step = backward ? -1 : 1;
  const ptrdiff_t first = backward ? ptrdiff_t(m) - 1 : 0;
  const double* p = in + first;
  double* q = out + first;
  double z1[kMaxSections], z2[kMaxSections];
  settle(sections, *p, z1, z2);
  for (size_t i = 0; i < m; ++i, p += step, q += step) {
    double v = *p;
    for (size_t s = 0; s < k; ++s) {
      const Biquad& b = sections[s];
      const double y = b.b0 * v + z1[s];
      z1[s] = b.b1 * v - b.a1 * y + z2[s];
      z2[s] = b.b2 * v - b.a2 * y;
      v = y;
    }
    *q = v;
  }
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
template <size_t K>
inline __attribute__((always_inline)) void run_pass_lanes_of(const std::vector<Biquad>& sections,
                                                             const double* in, double* out,
                                                             size_t m, bool backward,
                                                             size_t warmup) {
  // Four lanes to a vector register (AVX2), kGroups of them: wider vector types are split
  // by the compiler into spilled halves, and two independent groups overlap their latencies.
  using Four = double __attribute__((vector_size(4 * sizeof(double))));
  constexpr size_t kGroups = kLanes / 4;
  const size_t len = m / kLanes;  // lane j writes [j len, (j + 1) len); the last lane the rest
  // Step i of lane j is at position j len + i - warmup of the pass (counted in its own
  // direction); lane 0 idles on its first sample until its positions begin.
  auto at = [&](ptrdiff_t t) { return backward ? m - 1 - size_t(t) : size_t(t); };
  Four z1[K][kGroups], z2[K][kGroups], b0[K], b1[K], b2[K], a1[K], a2[K];
  for (size_t s = 0; s < K; ++s) {
    b0[s] = Four{} + sections[s].b0, b1[s] = Four{} + sections[s].b1;
    b2[s] = Four{} + sections[s].b2, a1[s] = Four{} + sections[s].a1;
    a2[s] = Four{} + sections[s].a2;
  }
  for (size_t j = 0; j < kLanes; ++j) {
    double s1[kMaxSections], s2[kMaxSections];
    settle(sections, in[at(ptrdiff_t(j * len) - ptrdiff_t(j ? warmup : 0))], s1, s2);
    for (size_t s = 0; s < K; ++s) z1[s][j / 4][j % 4] = s1[s], z2[s][j / 4][j % 4] = s2[s];
  }
  // Blocks of steps are copied lane by lane (sequential reads and writes) into a small
  // lane-major buffer of plain doubles, which the recursion walks a whole step at a time.
  constexpr size_t kBlock = 64;
  alignas(64) double block[kBlock][kLanes];
  const size_t steps = warmup + len;
  for (size_t i0 = 0; i0 < steps; i0 += kBlock) {
    const size_t nb = std::min(kBlock, steps - i0);
    for (size_t j = 0; j < kLanes; ++j) {
      const ptrdiff_t t0 = ptrdiff_t(j * len + i0) - ptrdiff_t(warmup);
      if (t0 < 0) {  // lane 0 in the warm-up
        for (size_t b = 0; b < nb; ++b) block[b][j] = in[at(std::max<ptrdiff_t>(t0 + b, 0))];
      } else if (backward) {
        const double* src = in + (m - 1 - size_t(t0));
        for (size_t b = 0; b < nb; ++b) block[b][j] = src[-ptrdiff_t(b)];
      } else {
        const double* src = in + t0;
        for (size_t b = 0; b < nb; ++b) block[b][j] = src[b];
      }
    }
    for (size_t b = 0; b < nb; ++b)
      for (size_t g = 0; g < kGroups; ++g) {
        Four v;
        std::memcpy(&v, &block[b][4 * g], sizeof v);
        for (size_t s = 0; s < K; ++s) {
          const Four y = b0[s] * v + z1[s][g];
          z1[s][g] = b1[s] * v - a1[s] * y + z2[s][g];
          z2[s][g] = b2[s] * v - a2[s] * y;
          v = y;
        }
        std::memcpy(&block[b][4 * g], &v, sizeof v);
      }
    if (i0 + nb <= warmup) continue;  // nothing of the lanes' own positions yet
    const size_t first = i0 < warmup ? warmup - i0 : 0;
    for (size_t j = 0; j < kLanes; ++j) {
      const ptrdiff_t t0 = ptrdiff_t(j * len + i0) - ptrdiff_t(warmup);
      double* dst = out + at(t0 + ptrdiff_t(first));
      const ptrdiff_t step = backward ? -1 : 1;
      for (size_t b = first; b < nb; ++b, dst += step) *dst = block[b][j];
    }
  }
  // The last lane goes on alone over the few samples that did not divide evenly.
  double s1[K], s2[K];
  for (size_t s = 0; s < K; ++s) s1[s] = z1[s][kGroups - 1][3], s2[s] = z2[s][kGroups - 1][3];
  for (size_t t = kLanes * len; t < m; ++t) {
    double v = in[at(ptrdiff_t(t))];
    for (size_t s = 0; s < K; ++s) {
      const Biquad& q = sections[s];
      const double y = q.b0 * v + s1[s];
      s1[s] = q.b1 * v - q.a1 * y + s2[s];
      s2[s] = q.b2 * v - q.a2 * y;
      v = y;
    }
    out[at(ptrdiff_t(t))] = v;
  }
}

HLM_TARGET_CLONES("avx512f", "avx2", "default")
void run_pass_lanes(const std::vector<Biquad>& sections, const double* in, double* out, size_t m,
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

void pass(const std::vector<Biquad>& sections, const double* in, double* out, size_t m,
          bool backward, bool allow_lanes) {
  const size_t warmup = memory_samples(sections, 1e-12);
  // Lanes pay off when the warm-up is a small part of each lane's segment.
  if (allow_lanes && sections.size() <= kMaxSections && warmup != SIZE_MAX &&
      m >= kLanes * 8 * warmup)
    run_pass_lanes(sections, in, out, m, backward, warmup);
  else
    run_pass(sections, in, out, m, backward);
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
  const size_t pad = std::min(pad_samples, n - 1);
  // Reused per thread: fresh pages for two signal-long buffers cost as much as the filter.
  thread_local std::vector<double> buf, forward;
  buf.resize(n + 2 * pad);
  forward.resize(buf.size());
  // Odd reflection about the end values keeps the level and the slope continuous.
  const double first = x[0], last = x[n - 1];
  for (size_t i = 0; i < pad; ++i) buf[pad - 1 - i] = 2.0 * first - x[i + 1];
  for (size_t i = 0; i < n; ++i) buf[pad + i] = x[i];
  for (size_t i = 0; i < pad; ++i) buf[pad + n + i] = 2.0 * last - x[n - 2 - i];
  pass(sections, buf.data(), forward.data(), buf.size(), false, allow_lanes);
  pass(sections, forward.data(), buf.data(), buf.size(), true, allow_lanes);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(buf[pad + i]);
}

}  // namespace hlm::dsp
