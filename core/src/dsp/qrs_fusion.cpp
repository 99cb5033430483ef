// Lead levels, lead weights and the fused envelope of the QRS detector (see qrs_fusion.h).
#include "dsp/qrs_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dsp/small_select.h"
#include "dsp/transpose16.h"
#include "util/target_clones.h"

namespace hlm::dsp::qrs {

namespace {
constexpr int kLevelHalfBlocks = 15;
constexpr int kQualityHalfBlocks = 2;
constexpr int kBackgroundStride = 8;  // every 8th sample estimates a block's median
constexpr float kNoisePercentile = 0.9f;

// Median of v[b - half .. b + half] (clipped), for every b: a sorted window that gains the
// entering value and loses the leaving one by binary search and a short shift.
std::vector<float> running_block_median(const std::vector<float>& v, int half) {
  const size_t n = v.size(), h = size_t(half);
  std::vector<float> out(n), window;
  window.reserve(2 * h + 1);
  auto insert = [&](float x) {
    window.insert(std::upper_bound(window.begin(), window.end(), x), x);
  };
  auto erase = [&](float x) { window.erase(std::lower_bound(window.begin(), window.end(), x)); };
  for (size_t b = 0; b < std::min(n, h); ++b) insert(v[b]);
  for (size_t b = 0; b < n; ++b) {
    if (b + h < n) insert(v[b + h]);
    if (b > h) erase(v[b - h - 1]);
    out[b] = window[window.size() / 2];
  }
  return out;
}

// The largest of v[0, n), n > 0, as 16 running maxima in one vector (std::max_element reads
// one value after another). The envelope holds no NaN, so the order of reading does not matter.
HLM_VECTOR_CLONES
float max_of(const float* v, size_t n) {
  using Sixteen = float __attribute__((vector_size(16 * sizeof(float))));
  Sixteen part = Sixteen{} + v[0];
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    Sixteen x;
    std::memcpy(&x, v + i, sizeof x);
    part = part < x ? x : part;
  }
  float best = v[0];
  for (size_t k = 0; k < 16; ++k) best = std::max(best, part[k]);
  for (; i < n; ++i) best = std::max(best, v[i]);
  return best;
}

// Values tagged with their block, in block order: the values of blocks [a, z) are contiguous.
struct BlockValues {
  std::vector<float> value;
  std::vector<size_t> start;  // start[b] = first value of block b; start[blocks] = size
  BlockValues(const std::vector<std::pair<size_t, float>>& tagged, size_t blocks)
      : start(blocks + 1, 0) {
    for (const auto& t : tagged) ++start[t.first + 1];
    for (size_t b = 0; b < blocks; ++b) start[b + 1] += start[b];
    value.resize(tagged.size());
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (const auto& t : tagged) value[fill[t.first]++] = t.second;
  }
};
}  // namespace

float median_in_place(float* v, size_t count) { return kth_smallest(v, count, count / 2); }

float percentile_in_place(float* v, size_t count, float q) {
  return kth_smallest(v, count, std::min(count - 1, size_t(float(count) * q)));
}

std::vector<float> qrs_level(const LeadEnvelope& lead) {
  const std::vector<float>& e = lead.energy;
  const size_t m = e.size(), blocks = (m + kBlock - 1) / kBlock;
  std::vector<float> block_max(blocks);
  for (size_t b = 0; b < blocks; ++b)
    block_max[b] = max_of(e.data() + b * kBlock, std::min(m, (b + 1) * kBlock) - b * kBlock);
  std::vector<float> level = running_block_median(block_max, kLevelHalfBlocks);
  for (float& v : level) v = std::max(v, 1e-12f);
  return level;
}

std::vector<float> peak_weight(const LeadEnvelope& lead, const std::vector<float>& level) {
  const std::vector<float>& e = lead.energy;
  const size_t m = e.size(), blocks = level.size();
  std::vector<float> block_max(blocks), block_bg(blocks), w(blocks);
  float sample[kBlock / kBackgroundStride + 1];
  for (size_t b = 0; b < blocks; ++b) {
    const size_t a = b * kBlock, z = std::min(m, a + kBlock);
    block_max[b] = max_of(e.data() + a, z - a) / level[b];
    size_t c = 0;
    for (size_t i = a; i < z; i += kBackgroundStride) sample[c++] = e[i];
    block_bg[b] = median_in_place(sample, c) / level[b];
  }
  const std::vector<float> peak = running_block_median(block_max, kQualityHalfBlocks);
  const std::vector<float> bg = running_block_median(block_bg, kQualityHalfBlocks);
  for (size_t b = 0; b < blocks; ++b) {
    // The block's own maximum caps the neighbourhood's, so a lead flat in this block is not
    // trusted on the strength of the blocks around it.
    const float q = std::min(peak[b], block_max[b]) / (bg[b] + 0.002f);
    w[b] = q * q + 1e-6f;
  }
  return w;
}

std::vector<float> beat_weight(const LeadEnvelope& lead, const std::vector<float>& level,
                               const std::vector<Candidate>& beats) {
  const std::vector<float>& e = lead.energy;
  const int64_t m = static_cast<int64_t>(e.size());
  const size_t blocks = level.size();
  const int64_t reach = std::llround(0.05 * kRateHz), guard = std::llround(0.15 * kRateHz);
  std::vector<std::pair<size_t, float>> at_beats, elsewhere;
  for (const Candidate& c : beats) {
    const int64_t a = std::max<int64_t>(0, c.i - reach), z = std::min(m - 1, c.i + reach);
    const size_t b = size_t(c.i / kBlock);
    at_beats.emplace_back(b, *std::max_element(e.begin() + a, e.begin() + z + 1) / level[b]);
  }
  // Noise: the highest point of each stretch between beats (a guard away from both), and of
  // the stretches before the first and after the last beat.
  int64_t from = 0;
  for (size_t k = 0; k <= beats.size(); ++k) {
    const int64_t to = k < beats.size() ? beats[k].i - guard : m;
    if (to > from) {
      const auto top = std::max_element(e.begin() + from, e.begin() + to);
      const size_t b = size_t((top - e.begin()) / kBlock);
      elsewhere.emplace_back(b, *top / level[b]);
    }
    if (k < beats.size()) from = beats[k].i + guard + 1;
  }
  const BlockValues beat_h(at_beats, blocks), noise_h(elsewhere, blocks);
  std::vector<float> w(blocks), scratch;
  for (size_t b = 0; b < blocks; ++b) {
    const size_t a = b >= kQualityHalfBlocks ? b - kQualityHalfBlocks : 0;
    const size_t z = std::min(blocks, b + kQualityHalfBlocks + 1);
    float beat = 0.0f, noise = 0.0f;
    scratch.assign(beat_h.value.begin() + beat_h.start[a], beat_h.value.begin() + beat_h.start[z]);
    if (!scratch.empty()) beat = median_in_place(scratch.data(), scratch.size());
    scratch.assign(noise_h.value.begin() + noise_h.start[a],
                   noise_h.value.begin() + noise_h.start[z]);
    if (!scratch.empty())
      noise = percentile_in_place(scratch.data(), scratch.size(), kNoisePercentile);
    const float q = beat / (noise + 0.05f);
    w[b] = q * q + 1e-6f;
  }
  return w;
}

namespace {
// One lead's part of the fused envelope over [from, to): each sample's coefficient ramps from
// c0 by `step` per sample, the sum taken sample after sample (a chain of additions, each
// waiting on the last).
// `energy` and `slope` may be e and s themselves (a lead scaled in place).
void ramp_one(float c0, float step, const float* e, const float* s, size_t from, size_t to,
              bool add, float* energy, float* slope) {
  float cc = c0;
  if (!add) {
    for (size_t i = from; i < to; ++i, cc += step) {
      energy[i] = cc * e[i];
      slope[i] = cc * s[i];
    }
  } else {
    for (size_t i = from; i < to; ++i, cc += step) {
      energy[i] += cc * e[i];
      slope[i] += cc * s[i];
    }
  }
}

// ramp_one over sixteen whole segments side by side: segment l runs from first + l kBlock for
// kBlock samples, from c0[l] by step[l]. The sixteen chains of additions run in one vector, the
// same additions in the same order, so the same bits; every sixteen samples the block of
// coefficients is turned across, so each segment's sixteen are multiplied as one vector. Each
// sample is read before it is written, so `energy` and `slope` may be e and s themselves.
HLM_VECTOR_CLONES
void ramp_sixteen(const float* c0, const float* step, const float* e, const float* s, size_t first,
                  bool add, float* energy, float* slope) {
  static_assert(kBlock % 16 == 0, "a segment is a whole number of 16-sample blocks");
  Float8 cc[2], by[2];  // segments 0-7 and 8-15
  std::memcpy(cc, c0, sizeof cc);
  std::memcpy(by, step, sizeof by);
  for (size_t j0 = 0; j0 < size_t(kBlock); j0 += 16) {
    Block16 r;  // row j: every segment's coefficient at sample j0 + j
    for (size_t j = 0; j < 16; ++j) {
      r.lo[j] = cc[0], r.hi[j] = cc[1];
      cc[0] += by[0], cc[1] += by[1];
    }
    transpose(r);  // row l: segment l's coefficients at samples j0 .. j0 + 15
    for (size_t l = 0; l < 16; ++l) {
      const size_t i = first + l * size_t(kBlock) + j0;
      for (size_t h = 0; h < 2; ++h) {
        const Float8 coefficient = h == 0 ? r.lo[l] : r.hi[l];
        Float8 ev, sv;
        std::memcpy(&ev, e + i + 8 * h, sizeof ev);
        std::memcpy(&sv, s + i + 8 * h, sizeof sv);
        Float8 fe = coefficient * ev, fs = coefficient * sv;
        if (add) {
          Float8 oe, os;
          std::memcpy(&oe, energy + i + 8 * h, sizeof oe);
          std::memcpy(&os, slope + i + 8 * h, sizeof os);
          fe = oe + fe;
          fs = os + fs;
        }
        std::memcpy(energy + i + 8 * h, &fe, sizeof fe);
        std::memcpy(slope + i + 8 * h, &fs, sizeof fs);
      }
    }
  }
}

// A lead's envelope and slope (e, s; m samples) times the coefficients c (one per block,
// interpolated between block centres), written to or added to (energy, slope), which may be
// (e, s) themselves.
void add_lead(const std::vector<float>& c, const float* e, const float* s, size_t m, bool add,
              float* energy, float* slope) {
  const size_t blocks = c.size();
  // Segment b runs from the centre of block b-1 to the centre of block b (the ends hold
  // their block's); segments 1 .. first_short - 1 span kBlock samples each.
  auto from = [&](size_t b) { return b == 0 ? 0 : (b - 1) * kBlock + kBlock / 2; };
  auto to = [&](size_t b) { return b == blocks ? m : std::min(m, b * kBlock + kBlock / 2); };
  auto c0 = [&](size_t b) { return c[b == 0 ? 0 : b - 1]; };
  auto step = [&](size_t b) { return (c[std::min(b, blocks - 1)] - c0(b)) / float(kBlock); };
  size_t first_short = 1;  // the first segment after 0 that spans less than kBlock
  while (first_short < blocks && to(first_short) - from(first_short) == size_t(kBlock))
    ++first_short;
  float c0s[16], steps[16];
  size_t b = 0;
  ramp_one(c0(b), step(b), e, s, from(b), to(b), add, energy, slope);
  for (b = 1; b + 16 <= first_short; b += 16) {
    for (size_t l = 0; l < 16; ++l) c0s[l] = c0(b + l), steps[l] = step(b + l);
    ramp_sixteen(c0s, steps, e, s, from(b), add, energy, slope);
  }
  for (; b <= blocks; ++b) ramp_one(c0(b), step(b), e, s, from(b), to(b), add, energy, slope);
}
}  // namespace

void fuse(const std::vector<LeadEnvelope>& leads, const std::vector<std::vector<float>>& level,
          const std::vector<std::vector<float>>& weight, Fused& f) {
  const size_t m = leads.empty() ? 0 : leads[0].energy.size();
  // Every sample is written by the first lead and added to by the others: no fill first.
  f.energy.resize(m);
  f.slope.resize(m);
  if (m == 0) return;
  const size_t blocks = level[0].size();
  std::vector<float> weight_sum(blocks, 0.0f), c(blocks);
  for (size_t k = 0; k < leads.size(); ++k)
    for (size_t b = 0; b < blocks; ++b) weight_sum[b] += weight[k][b];
  for (size_t k = 0; k < leads.size(); ++k) {
    for (size_t b = 0; b < blocks; ++b) c[b] = weight[k][b] / weight_sum[b] / level[k][b];
    add_lead(c, leads[k].energy.data(), leads[k].slope.data(), m, k > 0, f.energy.data(),
             f.slope.data());
  }
}

void fuse_in_place(LeadEnvelope& lead, const std::vector<float>& level, Fused& f) {
  const size_t m = lead.energy.size();
  if (m > 0) {
    // fuse's coefficients for one lead: its weight over the weights' sum is exactly 1.
    std::vector<float> c(level.size());
    for (size_t b = 0; b < c.size(); ++b) c[b] = 1.0f / level[b];
    add_lead(c, lead.energy.data(), lead.slope.data(), m, false, lead.energy.data(),
             lead.slope.data());
  }
  f.energy.swap(lead.energy);
  f.slope.swap(lead.slope);
}

std::vector<Candidate> find_candidates(const Fused& fused, int64_t separation) {
  const int64_t m = static_cast<int64_t>(fused.energy.size());
  const int64_t slope_h = std::llround(0.06 * kRateHz);
  std::vector<Candidate> out;
  for (const int64_t i : local_maxima(fused.energy, separation)) {
    Candidate c;
    c.i = i;
    c.height = fused.energy[i];
    const int64_t a = std::max<int64_t>(0, i - slope_h), z = std::min(m - 1, i + slope_h);
    c.slope = *std::max_element(fused.slope.begin() + a, fused.slope.begin() + z + 1);
    out.push_back(c);
  }
  return out;
}

void add_slow_heights(const std::vector<LeadEnvelope>& slow,
                      const std::vector<std::vector<float>>& slow_level,
                      const std::vector<std::vector<float>>& weight,
                      std::vector<Candidate>& candidates) {
  const int64_t reach = std::llround(0.06 * kRateHz / kSlowStretch);
  for (Candidate& c : candidates) {
    const size_t b = size_t(c.i / kBlock);
    float weight_sum = 0.0f, height = 0.0f;
    for (size_t k = 0; k < slow.size(); ++k) {
      const std::vector<float>& e = slow[k].energy;
      if (e.empty() || weight[k].empty()) continue;
      const int64_t m = static_cast<int64_t>(e.size());
      const int64_t j = std::min(m - 1, c.i / kSlowStretch);
      const int64_t a = std::max<int64_t>(0, j - reach), z = std::min(m - 1, j + reach);
      const float top = *std::max_element(e.begin() + a, e.begin() + z + 1);
      const std::vector<float>& level = slow_level[k];
      const float w = weight[k][std::min(b, weight[k].size() - 1)];
      height += w * top / level[std::min(size_t(j / kBlock), level.size() - 1)];
      weight_sum += w;
    }
    c.slow = weight_sum > 0.0f ? height / weight_sum : 0.0f;
  }
}

namespace {
// out[i] += c e[i / kSlowStretch] (or = for the `first` lead) for i in [from, to), where e has
// e_size samples and the last stands for any beyond it: each slow sample covers two main ones.
// The pairs vectorise; this file is built without FP contraction, so every clone adds the same
// rounded product.
HLM_VECTOR_CLONES
void add_stretched(float* out, const float* e, size_t e_size, size_t from, size_t to, float c,
                   bool first) {
  static_assert(kSlowStretch == 2, "a slow sample covers two main ones");
  // The first lead writes (0 + v is v for the envelope's values, none of them -0 or NaN), the
  // others add: the output is not filled with zeros first.
  auto put = [first](float& o, float v) { o = first ? v : o + v; };
  const size_t covered = std::min(to, 2 * e_size);  // i / 2 < e_size below it
  size_t i = from;
  if (i < covered && i % 2 == 1) put(out[i], c * e[i / 2]), ++i;
  const size_t pairs = (covered - std::min(i, covered)) / 2, k0 = i / 2;
  float* o = out + i;
  if (first) {
    for (size_t k = 0; k < pairs; ++k) o[2 * k] = o[2 * k + 1] = c * e[k0 + k];
  } else {
    for (size_t k = 0; k < pairs; ++k) {
      const float v = c * e[k0 + k];
      o[2 * k] += v;
      o[2 * k + 1] += v;
    }
  }
  for (i += 2 * pairs; i < to; ++i) put(out[i], c * e[std::min(e_size - 1, i / 2)]);
}
}  // namespace

void fuse_slow(const std::vector<LeadEnvelope>& slow,
               const std::vector<std::vector<float>>& slow_level,
               const std::vector<std::vector<float>>& weight, size_t m, std::vector<float>& out) {
  out.resize(m);
  bool first = true;  // no lead has written yet
  std::vector<float> weight_sum(m == 0 ? 0 : (m - 1) / kBlock + 1, 0.0f);
  for (size_t k = 0; k < slow.size(); ++k)
    for (size_t b = 0; b < weight_sum.size(); ++b)
      weight_sum[b] += weight[k][std::min(b, weight[k].size() - 1)];
  // Within one block of the main band the weight and the slow band's level are constant (a
  // slow block spans two main ones), so each lead adds one coefficient times its envelope.
  for (size_t k = 0; k < slow.size(); ++k) {
    const std::vector<float>& e = slow[k].energy;
    const std::vector<float>& level = slow_level[k];
    if (e.empty()) continue;
    for (size_t b = 0; b < weight_sum.size(); ++b) {
      const size_t jb = std::min((b * kBlock) / kSlowStretch / kBlock, level.size() - 1);
      const float c = weight[k][std::min(b, weight[k].size() - 1)] / weight_sum[b] / level[jb];
      add_stretched(out.data(), e.data(), e.size(), b * kBlock, std::min(m, (b + 1) * kBlock), c,
                    first);
    }
    first = false;
  }
  if (first) std::fill(out.begin(), out.end(), 0.0f);
}

}  // namespace hlm::dsp::qrs
