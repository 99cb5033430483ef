// Moving-sum front end of the QRS detector (see qrs_envelope.h).
#include "dsp/qrs_envelope.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/target_clones.h"

namespace hlm::dsp::qrs {

namespace {
constexpr ptrdiff_t kShort = 2;       // 25 ms mean: the band's upper edge (~30 Hz)
constexpr ptrdiff_t kLong = 12;       // 125 ms mean, subtracted: its lower edge (~5 Hz)
constexpr ptrdiff_t kIntegrate = 12;  // 125 ms moving mean of the slope

// Mean of v over the centred window of 2h + 1 samples clipped to the record.
float clipped_mean(const std::vector<float>& v, ptrdiff_t i, ptrdiff_t h) {
  const ptrdiff_t m = static_cast<ptrdiff_t>(v.size());
  const ptrdiff_t a = std::max<ptrdiff_t>(0, i - h), z = std::min(m - 1, i + h);
  float sum = 0.0f;
  for (ptrdiff_t k = a; k <= z; ++k) sum += v[k];
  return sum / float(z - a + 1);
}

// The centred sum of v over 5 samples at i (2 <= i < m - 2).
inline float sum_of_5(const float* v, ptrdiff_t i) {
  return v[i - 2] + v[i - 1] + v[i] + v[i + 1] + v[i + 2];
}

// centred_means at i in [a, z), all at least 12 samples from either end: sums of five 5-sample
// sums, worked out kChunk samples at a time so that the sums stay in cache (short loops that
// vectorise; float suffices since nothing accumulates along the record).
HLM_VECTOR_CLONES
void centred_means_inside(const float* v, ptrdiff_t a, ptrdiff_t z, bool with_short, float* out) {
  static_assert(kShort == 2 && kLong == 12 && kIntegrate == 12,
                "the means are built from 5-sample sums");
  constexpr ptrdiff_t kChunk = 2048, kReach = 10;  // the sums 10 samples either side
  float sums[kChunk + 2 * kReach];
  for (ptrdiff_t c0 = a; c0 < z; c0 += kChunk) {
    const ptrdiff_t c1 = std::min(z, c0 + kChunk);
    for (ptrdiff_t j = c0 - kReach; j < c1 + kReach; ++j) sums[j - c0 + kReach] = sum_of_5(v, j);
    const float* s = sums + kReach - c0;  // s[i] is the sum at i
    if (with_short) {
      for (ptrdiff_t i = c0; i < c1; ++i)
        out[i] = s[i] * 0.2f - (s[i - 10] + s[i - 5] + s[i] + s[i + 5] + s[i + 10]) * 0.04f;
    } else {
      for (ptrdiff_t i = c0; i < c1; ++i)
        out[i] = (s[i - 10] + s[i - 5] + s[i] + s[i + 5] + s[i + 10]) * 0.04f;
    }
  }
}

// out = (5-sample mean of v, if with_short) - 25-sample mean of v; near the ends the windows
// are clipped to the record.
void centred_means(const std::vector<float>& v, bool with_short, std::vector<float>& out) {
  const ptrdiff_t m = static_cast<ptrdiff_t>(v.size());
  out.resize(m);
  if (m > 24) centred_means_inside(v.data(), 12, m - 12, with_short, out.data());
  for (ptrdiff_t i = 0; i < m; ++i) {
    if (i == 12 && m > 24) i = m - 12;
    const float long_mean = clipped_mean(v, i, 12);
    if (!with_short) {
      out[i] = long_mean;
      continue;
    }
    const float short_mean =
        i >= 2 && i + 2 < m ? sum_of_5(v.data(), i) * 0.2f : clipped_mean(v, i, 2);
    out[i] = short_mean - long_mean;
  }
}

// out[k] = b linearly interpolated between b[at[k]] and the sample after, frac[k] of the way.
inline void read_between(const float* __restrict b, const int64_t* at, const float* frac,
                         ptrdiff_t count, float* __restrict out) {
  for (ptrdiff_t k = 0; k < count; ++k) {
    const float* p = b + at[k];
    out[k] = p[0] + frac[k] * (p[1] - p[0]);
  }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
// read_between sixteen outputs at a time with AVX-512: where the step is two samples or less
// (resampling from 400 Hz or below) their samples lie among 32 consecutive ones, so two loads and
// two permutes stand for 32 reads. The same arithmetic, so the same bits. b holds `size` samples.
__attribute__((target("arch=x86-64-v4"))) void read_between_wide(const float* __restrict b,
                                                                 size_t size, const int64_t* at,
                                                                 const float* frac, ptrdiff_t count,
                                                                 float* __restrict out) {
  using Floats = float __attribute__((vector_size(16 * sizeof(float))));
  using Ints = int32_t __attribute__((vector_size(16 * sizeof(int32_t))));
  ptrdiff_t k = 0;
  for (; k + 16 <= count; k += 16) {
    const int64_t first = at[k];
    if (at[k + 15] + 1 - first >= 32 || size_t(first) + 32 > size) break;
    Ints place;
    for (int l = 0; l < 16; ++l) place[l] = int32_t(at[k + l] - first);
    Floats lo, hi, f;
    std::memcpy(&lo, b + first, sizeof lo);
    std::memcpy(&hi, b + first + 16, sizeof hi);
    std::memcpy(&f, frac + k, sizeof f);
    const Floats p0 = __builtin_shuffle(lo, hi, place);
    const Floats p1 = __builtin_shuffle(lo, hi, place + 1);
    const Floats v = p0 + f * (p1 - p0);
    std::memcpy(out + k, &v, sizeof v);
  }
  read_between(b, at + k, frac + k, count - k, out + k);
}
#else
void read_between_wide(const float* b, size_t, const int64_t* at, const float* frac,
                       ptrdiff_t count, float* out) {
  read_between(b, at, frac, count, out);
}
#endif

// out[j - first] for j in [first, first + count): the signal linearly interpolated at j * ratio,
// which lies before its last sample, so each reads two samples without a bound to check. b holds
// the signal's samples from `offset` on, `size` of them. Blocks of positions and fractions are
// worked out first (a loop that vectorises); the reads, gathers the compiler does not make,
// follow.
HLM_VECTOR_CLONES
void interpolate_before_last(const float* __restrict b, ptrdiff_t offset, size_t size, double ratio,
                             ptrdiff_t first, ptrdiff_t count, float* __restrict out) {
  constexpr ptrdiff_t kBlock = 256;
  int64_t at[kBlock];
  float frac[kBlock];
  const bool wide = cpu_has_x86_64_v4();
  for (ptrdiff_t j0 = 0; j0 < count; j0 += kBlock) {
    const ptrdiff_t nb = std::min(kBlock, count - j0);
    for (ptrdiff_t k = 0; k < nb; ++k) {
      const double t = double(first + j0 + k) * ratio;
      const int64_t i = static_cast<int64_t>(t);
      at[k] = i - offset;
      frac[k] = float(t - double(i));
    }
    if (wide)
      read_between_wide(b, size, at, frac, nb, out + j0);
    else
      read_between(b, at, frac, nb, out + j0);
  }
}

// y = x resampled by `ratio` (input samples per output sample): a centred boxcar of ~ratio
// samples against aliasing (none below 1.5), then linear interpolation. The boxcar is taken
// once at every input sample it is read at (a loop that vectorises), block by block of the
// output, so that only a block's span of it is ever held (not a copy of the whole record at
// the input rate).
HLM_VECTOR_CLONES
void resample(const float* x, size_t n, double ratio, std::vector<float>& y) {
  const ptrdiff_t m = static_cast<ptrdiff_t>(std::floor(double(n - 1) / ratio)) + 1;
  const ptrdiff_t nn = static_cast<ptrdiff_t>(n);
  const ptrdiff_t h = std::max<ptrdiff_t>(1, std::lround(ratio)) / 2;
  const float inv = 1.0f / float(2 * h + 1);
  auto clipped = [&](ptrdiff_t i) {  // near the ends: the mean of the samples there are
    const ptrdiff_t lo = std::max<ptrdiff_t>(0, i - h), hi = std::min(nn - 1, i + h);
    float sum = 0.0f;
    for (ptrdiff_t k = lo; k <= hi; ++k) sum += x[k];
    return sum / float(hi - lo + 1);
  };
  // Samples [a, z) of the boxcar into box[0 .. z - a).
  auto boxed = [&](ptrdiff_t a, ptrdiff_t z, float* box) {
    const ptrdiff_t in_a = std::clamp(h, a, z), in_z = std::clamp(nn - h, in_a, z);
    for (ptrdiff_t i = a; i < in_a; ++i) box[i - a] = clipped(i);
    if (h == 1) {  // 360 Hz and similar
      for (ptrdiff_t i = in_a; i < in_z; ++i) box[i - a] = (x[i - 1] + x[i] + x[i + 1]) * inv;
    } else {
      for (ptrdiff_t i = in_a; i < in_z; ++i) {
        float sum = 0.0f;
        for (ptrdiff_t k = -h; k <= h; ++k) sum += x[i + k];
        box[i - a] = sum * inv;
      }
    }
    for (ptrdiff_t i = in_z; i < z; ++i) box[i - a] = clipped(i);
  };
  y.resize(m);
  float* out = y.data();
  constexpr ptrdiff_t kOutBlock = 4096;
  thread_local std::vector<float> box;
  for (ptrdiff_t j0 = 0; j0 < m; j0 += kOutBlock) {
    const ptrdiff_t j1 = std::min(m, j0 + kOutBlock);
    // Output j reads the boxcar at floor(j * ratio) and the sample after (the last output at
    // most at its own sample, clipped below).
    const ptrdiff_t a = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(double(j0) * ratio), nn - 1);
    const ptrdiff_t z = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(double(j1 - 1) * ratio) + 2, nn);
    const float* b = x + a;  // b[i - a] is the (boxcar of the) signal at input sample i
    if (h > 0) {
      if (box.size() < size_t(z - a)) box.resize(size_t(z - a));
      boxed(a, z, box.data());
      b = box.data();
    }
    const ptrdiff_t inner = std::min(j1, m - 1) - j0;  // outputs before the last one
    if (inner > 0) interpolate_before_last(b, a, size_t(z - a), ratio, j0, inner, out + j0);
    if (j1 == m) {
      const double t = double(m - 1) * ratio;
      const ptrdiff_t i = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(t), nn - 1) - a;
      out[m - 1] = i + a + 1 < nn ? b[i] + float(t - double(i + a)) * (b[i + 1] - b[i]) : b[i];
    }
  }
}

// The band, its slope and the envelope of a resampled lead (see LeadEnvelope); the band is kept
// in e.band only when `keep_band` (the slow band's, which the pause search reads).
HLM_VECTOR_CLONES
void band_envelope(const std::vector<float>& y, LeadEnvelope& e, bool keep_band) {
  const ptrdiff_t m = static_cast<ptrdiff_t>(y.size());
  // Otherwise a per-thread buffer: fresh pages cost more than the arithmetic.
  thread_local std::vector<float> scratch;
  std::vector<float>& band = keep_band ? e.band : scratch;
  // Band-pass: a 25 ms mean minus a 125 ms mean; its rectified central difference is the
  // slope. Unlike the squared slope, that keeps wide ventricular beats and flutter waves within
  // reach of narrow QRS complexes.
  centred_means(y, true, band);
  e.slope.resize(m);
  for (ptrdiff_t i = 1; i + 1 < m; ++i) e.slope[i] = 0.5f * std::fabs(band[i + 1] - band[i - 1]);
  e.slope[0] = m > 1 ? 0.5f * std::fabs(band[1] - band[0]) : 0.0f;
  if (m > 1) e.slope[m - 1] = 0.5f * std::fabs(band[m - 1] - band[m - 2]);
  // The envelope: the 125 ms centred moving mean of the slope.
  centred_means(e.slope, false, e.energy);
  if (!keep_band) release_if_large(scratch);
}
}  // namespace

void lead_envelope(const float* x, size_t n, double sampling_hz, LeadEnvelope& e,
                   LeadEnvelope* slow) {
  // Every sample of each vector is written below, so a reused one is resized, not cleared:
  // clearing would have its pages filled with zeros again first.
  e.band.clear();  // the main band is not kept
  if (n == 0) {
    e.slope.clear(), e.energy.clear();
    if (slow) slow->slope.clear(), slow->energy.clear(), slow->band.clear();
    return;
  }
  thread_local std::vector<float> y, y_slow;
  resample(x, n, sampling_hz / kRateHz, y);
  band_envelope(y, e, false);
  if (slow) {
    // The same band and windows on the lead at kRateHz / kSlowStretch: each lasts that many
    // times longer.
    resample(y.data(), y.size(), double(kSlowStretch), y_slow);
    band_envelope(y_slow, *slow, true);
    release_if_large(y_slow);
  }
  release_if_large(y);
}

}  // namespace hlm::dsp::qrs
