// Nearest-code assignment for k-means and beat tokenisation: distances as
// ||c||^2 - 2 x.c (+ ||x||^2) with 4 rows x 16 codes of dot products held in registers.
#include <algorithm>
#include <limits>
#include <thread>

#include "dsp/parallel.h"
#include "hlm/dsp/kmeans.h"

namespace hlm::dsp {

namespace {
constexpr int kRowTile = 4;  // nearest_codes is written out for 4 rows
constexpr int kCodeTile = 16;

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HLM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HLM_VECTOR_CLONES
#endif

// Codes laid out tile by tile, each tile dim x 16 so the 16 codes of one coordinate are
// contiguous; missing codes of the last tile are zero with an infinite norm.
struct PackedCodes {
  int dim = 0, tiles = 0;
  std::vector<float> values, norms;
};

PackedCodes pack(const Codebook& cb) {
  PackedCodes p;
  p.dim = cb.dim;
  const int k = cb.codes();
  p.tiles = (k + kCodeTile - 1) / kCodeTile;
  p.values.assign(size_t(p.tiles) * kCodeTile * cb.dim, 0.0f);
  p.norms.assign(size_t(p.tiles) * kCodeTile, std::numeric_limits<float>::infinity());
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

// Nearest code for kRowTile rows: for each tile of 16 codes, the 4 x 16 dot products are
// accumulated in registers, turned into ||c||^2 - 2 x.c and folded into a per-lane running
// minimum (branch-free; strict < keeps the lowest index per lane). Lanes are merged at the end,
// ties going to the lower code index, which makes the result independent of the tiling.
HLM_VECTOR_CLONES
void nearest_codes(const float* const rows[kRowTile], const PackedCodes& p,
                   float best_out[kRowTile], uint32_t code_out[kRowTile]) {
  const int dim = p.dim;
  const float* __restrict r0 = rows[0];
  const float* __restrict r1 = rows[1];
  const float* __restrict r2 = rows[2];
  const float* __restrict r3 = rows[3];
  float best[kRowTile][kCodeTile];
  uint32_t code[kRowTile][kCodeTile];
  for (int r = 0; r < kRowTile; ++r)
    for (int j = 0; j < kCodeTile; ++j) best[r][j] = std::numeric_limits<float>::infinity(), code[r][j] = 0;
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
        best[r][j] = better ? d : best[r][j];
        code[r][j] = better ? base + uint32_t(j) : code[r][j];
      }
  }
  for (int r = 0; r < kRowTile; ++r) {
    float b = best[r][0];
    uint32_t c = code[r][0];
    for (int j = 1; j < kCodeTile; ++j)
      if (best[r][j] < b || (best[r][j] == b && code[r][j] < c)) b = best[r][j], c = code[r][j];
    best_out[r] = b;
    code_out[r] = c;
  }
}

void assign_range(const PackedCodes& p, const float* data, size_t first, size_t last,
                  uint32_t* index, float* distance2) {
  const int dim = p.dim;
  for (size_t r0 = first; r0 < last; r0 += kRowTile) {
    const float* rows[kRowTile];
    // A short last tile repeats its final row; only the real rows are written back.
    for (int r = 0; r < kRowTile; ++r)
      rows[r] = data + std::min(r0 + r, last - 1) * size_t(dim);
    float best[kRowTile];
    uint32_t best_code[kRowTile];
    nearest_codes(rows, p, best, best_code);
    for (int r = 0; r < kRowTile && r0 + r < last; ++r) {
      index[r0 + r] = best_code[r];
      if (distance2) {
        float xx = 0.0f;
        for (int d = 0; d < dim; ++d) xx += rows[r][d] * rows[r][d];
        distance2[r0 + r] = std::max(0.0f, xx + best[r]);
      }
    }
  }
}
}  // namespace

void assign_nearest(const Codebook& codebook, const float* data, size_t rows, uint32_t* index,
                    float* distance2, int threads) {
  if (rows == 0 || codebook.empty()) return;
  const PackedCodes packed = pack(codebook);
  // Chunks are a fixed size, so each row's arithmetic is the same for any thread count.
  parallel_chunks(rows, 1024, threads, [&](size_t first, size_t last) {
    assign_range(packed, data, first, last, index, distance2);
  });
}

}  // namespace hlm::dsp
