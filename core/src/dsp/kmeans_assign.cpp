// Nearest-code assignment for k-means and beat tokenisation: distances as
// ||c||^2 - 2 x.c (+ ||x||^2) with 4 rows x 16 codes of dot products held in registers.
#include <algorithm>
#include <limits>
#include <thread>

#include "dsp/parallel.h"
#include "hlm/dsp/kmeans.h"

namespace hlm::dsp {

namespace {
constexpr int kRowTile = 4;
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

// Dot products of kRowTile rows with one tile of codes.
HLM_VECTOR_CLONES
void tile_dots(const float* const rows[kRowTile], const float* tile, int dim,
               float acc[kRowTile][kCodeTile]) {
  for (int r = 0; r < kRowTile; ++r)
    for (int j = 0; j < kCodeTile; ++j) acc[r][j] = 0.0f;
  for (int d = 0; d < dim; ++d) {
    const float* c = tile + size_t(d) * kCodeTile;
    for (int r = 0; r < kRowTile; ++r) {
      const float x = rows[r][d];
      for (int j = 0; j < kCodeTile; ++j) acc[r][j] += x * c[j];
    }
  }
}

void assign_range(const PackedCodes& p, const float* data, size_t first, size_t last,
                  uint32_t* index, float* distance2) {
  const int dim = p.dim;
  float acc[kRowTile][kCodeTile];
  for (size_t r0 = first; r0 < last; r0 += kRowTile) {
    const float* rows[kRowTile];
    // A short last tile repeats its final row; only the real rows are written back.
    for (int r = 0; r < kRowTile; ++r)
      rows[r] = data + std::min(r0 + r, last - 1) * size_t(dim);
    float best[kRowTile];
    uint32_t best_code[kRowTile] = {0, 0, 0, 0};
    std::fill(best, best + kRowTile, std::numeric_limits<float>::infinity());
    for (int t = 0; t < p.tiles; ++t) {
      tile_dots(rows, &p.values[size_t(t) * dim * kCodeTile], dim, acc);
      const float* norms = &p.norms[size_t(t) * kCodeTile];
      for (int r = 0; r < kRowTile; ++r)
        for (int j = 0; j < kCodeTile; ++j) {
          const float d = norms[j] - 2.0f * acc[r][j];
          if (d < best[r]) best[r] = d, best_code[r] = uint32_t(t * kCodeTile + j);
        }
    }
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
