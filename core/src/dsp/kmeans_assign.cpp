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

// For kRowTile rows: per tile of 16 codes, the 4 x 16 dot products are accumulated in
// registers and turned into ||c||^2 - 2 x.c; each lane keeps its smallest and second smallest
// value (strict <: the lowest index wins a tie) without branches. Lanes merge at the end, ties
// to the lower code, so the result does not depend on the tiling.
HLM_VECTOR_CLONES
void nearest_codes(const float* const rows[kRowTile], const PackedCodes& p,
                   float best_out[kRowTile], float second_out[kRowTile],
                   uint32_t code_out[kRowTile]) {
  const int dim = p.dim;
  const float* __restrict r0 = rows[0];
  const float* __restrict r1 = rows[1];
  const float* __restrict r2 = rows[2];
  const float* __restrict r3 = rows[3];
  float best[kRowTile][kCodeTile], second[kRowTile][kCodeTile];
  uint32_t code[kRowTile][kCodeTile];
  for (int r = 0; r < kRowTile; ++r)
    for (int j = 0; j < kCodeTile; ++j) best[r][j] = kInf, second[r][j] = kInf, code[r][j] = 0;
  for (int t = 0; t < p.tiles; ++t) {
    const float* __restrict tile = &p.values[size_t(t) * dim * kCodeTile];
    float acc[kRowTile][kCodeTile] = {};
    for (int d = 0; d < dim; ++d) {
      const float* __restrict c = tile + size_t(d) * kCodeTile;
      const float x0 = r0[d], x1 = r1[d], x2 = r2[d], x3 = r3[d];
      for (int j = 0; j < kCodeTile; ++j) {
        acc[0][j] += x0 * c[j];
        acc[1][j] += x1 * c[j];
        acc[2][j] += x2 * c[j];
        acc[3][j] += x3 * c[j];
      }
    }
    const float* __restrict norms = &p.norms[size_t(t) * kCodeTile];
    const uint32_t base = uint32_t(t * kCodeTile);
    for (int r = 0; r < kRowTile; ++r)
      for (int j = 0; j < kCodeTile; ++j) {
        const float d = norms[j] - 2.0f * acc[r][j];
        const bool better = d < best[r][j];
        second[r][j] = std::min(second[r][j], std::max(best[r][j], d));
        best[r][j] = better ? d : best[r][j];
        code[r][j] = better ? base + uint32_t(j) : code[r][j];
      }
  }
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

void nearest_range(const PackedCodes& p, const float* const* rows, size_t first, size_t last,
                   uint32_t* code, float* d1, float* d2) {
  const int dim = p.dim;
  for (size_t r0 = first; r0 < last; r0 += kRowTile) {
    const float* tile_rows[kRowTile];
    // A short last tile repeats its final row; only the real rows are written back.
    for (int r = 0; r < kRowTile; ++r) tile_rows[r] = rows[std::min(r0 + r, last - 1)];
    float best[kRowTile], next[kRowTile];
    uint32_t best_code[kRowTile];
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
