// Nearest-code search for k-means and beat tokenisation (see kmeans_kernels.h): 4 rows x 16
// codes of dot products held in registers, minima kept per lane without branches.
#include <algorithm>
#include <limits>

#include "dsp/kmeans_kernels.h"
#include "dsp/parallel.h"
#include "util/target_clones.h"

namespace hlm::dsp {
namespace kmeans {

namespace {
constexpr int kRowTile = 4;  // nearest_codes is written out for 4 rows
constexpr float kInf = std::numeric_limits<float>::infinity();

// kTiles tiles of 16 codes from tile t on, for kRowTile rows: the dot products are accumulated
// in registers and turned into ||c||^2 - 2 x.c; each lane keeps its smallest and second
// smallest value (strict <: the lowest index wins a tie) without branches, tile after tile.
template <int kTiles>
inline __attribute__((always_inline)) void tiles_step(const float* const rows[kRowTile],
                                                      const PackedCodes& p, int t,
                                                      float best[kRowTile][kCodeTile],
                                                      float second[kRowTile][kCodeTile],
                                                      uint32_t code[kRowTile][kCodeTile]) {
  const int dim = p.dim;
  const float* __restrict r0 = rows[0];
  const float* __restrict r1 = rows[1];
  const float* __restrict r2 = rows[2];
  const float* __restrict r3 = rows[3];
  float acc[kTiles][kRowTile][kCodeTile] = {};
  for (int d = 0; d < dim; ++d) {
    const float x0 = r0[d], x1 = r1[d], x2 = r2[d], x3 = r3[d];
    for (int k = 0; k < kTiles; ++k) {
      const float* __restrict c = &p.values[(size_t(t + k) * dim + d) * kCodeTile];
      for (int j = 0; j < kCodeTile; ++j) {
        acc[k][0][j] += x0 * c[j];
        acc[k][1][j] += x1 * c[j];
        acc[k][2][j] += x2 * c[j];
        acc[k][3][j] += x3 * c[j];
      }
    }
  }
  for (int k = 0; k < kTiles; ++k) {
    const float* __restrict norms = &p.norms[size_t(t + k) * kCodeTile];
    const uint32_t base = uint32_t((t + k) * kCodeTile);
    for (int r = 0; r < kRowTile; ++r)
      for (int j = 0; j < kCodeTile; ++j) {
        const float d = norms[j] - 2.0f * acc[k][r][j];
        const bool better = d < best[r][j];
        second[r][j] = std::min(second[r][j], std::max(best[r][j], d));
        best[r][j] = better ? d : best[r][j];
        code[r][j] = better ? base + uint32_t(j) : code[r][j];
      }
  }
}

// For kRowTile rows: every tile, kTiles at a time, then the lanes merged, ties to the lower
// code, so the result does not depend on the tiling.
template <int kTiles>
inline __attribute__((always_inline)) void nearest_codes_of(const float* const rows[kRowTile],
                                                            const PackedCodes& p,
                                                            float best_out[kRowTile],
                                                            float second_out[kRowTile],
                                                            uint32_t code_out[kRowTile]) {
  float best[kRowTile][kCodeTile], second[kRowTile][kCodeTile];
  uint32_t code[kRowTile][kCodeTile];
  for (int r = 0; r < kRowTile; ++r)
    for (int j = 0; j < kCodeTile; ++j) best[r][j] = kInf, second[r][j] = kInf, code[r][j] = 0;
  int t = 0;
  for (; t + kTiles <= p.tiles; t += kTiles) tiles_step<kTiles>(rows, p, t, best, second, code);
  for (; t < p.tiles; ++t) tiles_step<1>(rows, p, t, best, second, code);
  for (int r = 0; r < kRowTile; ++r) {
    int lane = 0;
    for (int j = 1; j < kCodeTile; ++j)
      if (best[r][j] < best[r][lane] || (best[r][j] == best[r][lane] && code[r][j] < code[r][lane]))
        lane = j;
    float next = second[r][lane];
    for (int j = 0; j < kCodeTile; ++j)
      if (j != lane) next = std::min(next, best[r][j]);
    best_out[r] = best[r][lane];
    second_out[r] = next;
    code_out[r] = code[r][lane];
  }
}

// One tile at a time: 4 x 16 dot products fill the registers of AVX2 and SSE.
HLM_VECTOR_CLONES
void nearest_codes(const float* const rows[kRowTile], const PackedCodes& p,
                   float best_out[kRowTile], float second_out[kRowTile],
                   uint32_t code_out[kRowTile]) {
  nearest_codes_of<1>(rows, p, best_out, second_out, code_out);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
// Two tiles at a time with AVX-512: 8 independent sums (one register each), as many as its two
// FMA units need to hide their latency, where one tile's 4 leave half of them idle. The same
// arithmetic per code and the same order of updates as one tile at a time, so the same bits.
__attribute__((target("arch=x86-64-v4"))) void nearest_codes_wide(const float* const rows[kRowTile],
                                                                  const PackedCodes& p,
                                                                  float best_out[kRowTile],
                                                                  float second_out[kRowTile],
                                                                  uint32_t code_out[kRowTile]) {
  nearest_codes_of<2>(rows, p, best_out, second_out, code_out);
}
bool wide_supported() {
  static const bool wide = (__builtin_cpu_init(), __builtin_cpu_supports("x86-64-v4"));
  return wide;
}
#else
bool wide_supported() { return false; }
void nearest_codes_wide(const float* const rows[kRowTile], const PackedCodes& p,
                        float best_out[kRowTile], float second_out[kRowTile],
                        uint32_t code_out[kRowTile]) {
  nearest_codes(rows, p, best_out, second_out, code_out);
}
#endif

void nearest_range(const PackedCodes& p, const float* const* rows, size_t first, size_t last,
                   uint32_t* code, float* d1, float* d2) {
  const int dim = p.dim;
  const bool wide = wide_supported();
  for (size_t r0 = first; r0 < last; r0 += kRowTile) {
    const float* tile_rows[kRowTile];
    // A short last tile repeats its final row; only the real rows are written back.
    for (int r = 0; r < kRowTile; ++r) tile_rows[r] = rows[std::min(r0 + r, last - 1)];
    float best[kRowTile], next[kRowTile];
    uint32_t best_code[kRowTile];
    if (wide)
      nearest_codes_wide(tile_rows, p, best, next, best_code);
    else
      nearest_codes(tile_rows, p, best, next, best_code);
    for (int r = 0; r < kRowTile && r0 + r < last; ++r) {
      code[r0 + r] = best_code[r];
      if (!d1 && !d2) continue;
      float xx = 0.0f;
      for (int d = 0; d < dim; ++d) xx += tile_rows[r][d] * tile_rows[r][d];
      if (d1) d1[r0 + r] = std::max(0.0f, xx + best[r]);
      if (d2) d2[r0 + r] = next[r] == kInf ? kInf : std::max(0.0f, xx + next[r]);
    }
  }
}
}  // namespace

// Eight partial sums, so the loop vectorises without reassociating a single float sum.
HLM_VECTOR_CLONES
float squared_distance_impl(const float* __restrict a, const float* __restrict b, int dim) {
  float part[8] = {};
  int d = 0;
  for (; d + 8 <= dim; d += 8)
    for (int k = 0; k < 8; ++k) part[k] += (a[d + k] - b[d + k]) * (a[d + k] - b[d + k]);
  float s =
      ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  for (; d < dim; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

float squared_distance(const float* a, const float* b, int dim) {
  return squared_distance_impl(a, b, dim);
}

PackedCodes pack(const Codebook& cb) {
  PackedCodes p;
  p.dim = cb.dim;
  const int k = cb.codes();
  p.tiles = (k + kCodeTile - 1) / kCodeTile;
  p.values.assign(size_t(p.tiles) * kCodeTile * cb.dim, 0.0f);
  p.norms.assign(size_t(p.tiles) * kCodeTile, kInf);
  for (int c = 0; c < k; ++c) {
    const float* v = &cb.centroids[size_t(c) * cb.dim];
    float norm = 0.0f;
    for (int d = 0; d < cb.dim; ++d) {
      p.values[(size_t(c / kCodeTile) * cb.dim + d) * kCodeTile + c % kCodeTile] = v[d];
      norm += v[d] * v[d];
    }
    p.norms[c] = norm;
  }
  return p;
}

void nearest_two(const PackedCodes& codes, const float* const* rows, size_t count, uint32_t* code,
                 float* first, float* second, int threads) {
  // Fixed chunks: each row's arithmetic is the same for any thread count.
  parallel_chunks(count, 1024, threads, [&](size_t a, size_t b) {
    nearest_range(codes, rows, a, b, code, first, second);
  });
}

}  // namespace kmeans

void assign_nearest(const Codebook& codebook, const float* data, size_t rows, uint32_t* index,
                    float* distance2, int threads) {
  if (rows == 0 || codebook.empty()) return;
  std::vector<const float*> ptr(rows);
  for (size_t i = 0; i < rows; ++i) ptr[i] = data + i * size_t(codebook.dim);
  kmeans::nearest_two(kmeans::pack(codebook), ptr.data(), rows, index, distance2, nullptr, threads);
}

}  // namespace hlm::dsp
