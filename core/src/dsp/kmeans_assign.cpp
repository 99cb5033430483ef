// Nearest-code search for k-means and beat tokenisation (see kmeans_kernels.h): 4 rows x 16
// codes of dot products held in registers (8 rows x 32 codes with AVX-512), minima kept per
// lane without branches.
#include <algorithm>
#include <cstring>
#include <limits>

#include "dsp/kmeans_kernels.h"
#include "dsp/parallel.h"
#include "util/target_clones.h"

namespace hlm::dsp {
namespace kmeans {

namespace {
constexpr int kRowTile = 4;   // rows per call of nearest_codes
constexpr int kWideRows = 8;  // rows per call of nearest_codes_wide
constexpr float kInf = std::numeric_limits<float>::infinity();

// kTiles tiles of 16 codes from tile t on, for kRows rows: the dot products are accumulated in
// registers and turned into ||c||^2 - 2 x.c; each lane keeps its smallest and second smallest
// value (strict <: the lowest index wins a tie) without branches, tile after tile.
template <int kRows, int kTiles>
inline __attribute__((always_inline)) void tiles_step(const float* const rows[],
                                                      const PackedCodes& p, int t,
                                                      float best[][kCodeTile],
                                                      float second[][kCodeTile],
                                                      uint32_t code[][kCodeTile]) {
  // One vector per row and tile (a register with AVX-512, two with AVX2), spelled out so that
  // the compiler keeps each in registers rather than vectorising across rows.
  using Codes = float __attribute__((vector_size(kCodeTile * sizeof(float))));
  const int dim = p.dim;
  Codes acc[kTiles][kRows] = {};
  for (int d = 0; d < dim; ++d) {
    for (int k = 0; k < kTiles; ++k) {
      Codes c;
      std::memcpy(&c, &p.values[(size_t(t + k) * dim + d) * kCodeTile], sizeof c);
      for (int r = 0; r < kRows; ++r) acc[k][r] += rows[r][d] * c;
    }
  }
  for (int k = 0; k < kTiles; ++k) {
    const float* __restrict norms = &p.norms[size_t(t + k) * kCodeTile];
    const uint32_t base = uint32_t((t + k) * kCodeTile);
    for (int r = 0; r < kRows; ++r) {
      float dots[kCodeTile];
      std::memcpy(dots, &acc[k][r], sizeof dots);
      for (int j = 0; j < kCodeTile; ++j) {
        const float d = norms[j] - 2.0f * dots[j];
        const bool better = d < best[r][j];
        second[r][j] = std::min(second[r][j], std::max(best[r][j], d));
        best[r][j] = better ? d : best[r][j];
        code[r][j] = better ? base + uint32_t(j) : code[r][j];
      }
    }
  }
}

// For kRows rows: every tile, kTiles at a time, then the lanes merged, ties to the lower code,
// so the result does not depend on the tiling.
template <int kRows, int kTiles>
inline __attribute__((always_inline)) void nearest_codes_of(const float* const rows[],
                                                            const PackedCodes& p, float best_out[],
                                                            float second_out[],
                                                            uint32_t code_out[]) {
  float best[kRows][kCodeTile], second[kRows][kCodeTile];
  uint32_t code[kRows][kCodeTile];
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < kCodeTile; ++j) best[r][j] = kInf, second[r][j] = kInf, code[r][j] = 0;
  int t = 0;
  for (; t + kTiles <= p.tiles; t += kTiles)
    tiles_step<kRows, kTiles>(rows, p, t, best, second, code);
  for (; t < p.tiles; ++t) tiles_step<kRows, 1>(rows, p, t, best, second, code);
  for (int r = 0; r < kRows; ++r) {
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

// 4 rows, one tile at a time: 4 x 16 dot products fill the registers of AVX2 and SSE.
HLM_VECTOR_CLONES
void nearest_codes(const float* const rows[], const PackedCodes& p, float best_out[],
                   float second_out[], uint32_t code_out[]) {
  nearest_codes_of<kRowTile, 1>(rows, p, best_out, second_out, code_out);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
// 8 rows, two tiles at a time, with AVX-512's 32 registers: 16 independent sums keep both FMA
// units busy where 4 left them waiting on latency, and each code is read from cache once per 8
// rows instead of 4. The same arithmetic per code and the same order of updates as one tile of
// 4 rows at a time, so the same bits.
__attribute__((target("arch=x86-64-v4"))) void nearest_codes_wide(const float* const rows[],
                                                                  const PackedCodes& p,
                                                                  float best_out[],
                                                                  float second_out[],
                                                                  uint32_t code_out[]) {
  nearest_codes_of<kWideRows, 2>(rows, p, best_out, second_out, code_out);
}
#else
void nearest_codes_wide(const float* const rows[], const PackedCodes& p, float best_out[],
                        float second_out[], uint32_t code_out[]) {
  nearest_codes(rows, p, best_out, second_out, code_out);
  nearest_codes(rows + kRowTile, p, best_out + kRowTile, second_out + kRowTile,
                code_out + kRowTile);
}
#endif

void nearest_range(const PackedCodes& p, const float* const* rows, size_t first, size_t last,
                   uint32_t* code, float* d1, float* d2) {
  const int dim = p.dim;
  const bool wide = cpu_has_x86_64_v4();
  const size_t step = wide ? kWideRows : kRowTile;
  for (size_t r0 = first; r0 < last; r0 += step) {
    const float* tile_rows[kWideRows];
    // A short last tile repeats its final row; only the real rows are written back.
    for (size_t r = 0; r < step; ++r) tile_rows[r] = rows[std::min(r0 + r, last - 1)];
    float best[kWideRows], next[kWideRows];
    uint32_t best_code[kWideRows];
    if (wide)
      nearest_codes_wide(tile_rows, p, best, next, best_code);
    else
      nearest_codes(tile_rows, p, best, next, best_code);
    for (size_t r = 0; r < step && r0 + r < last; ++r) {
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

PackedCodebook::PackedCodebook(const Codebook& codebook)
    : codes_(codebook.empty()
                 ? nullptr
                 : std::make_shared<const kmeans::PackedCodes>(kmeans::pack(codebook))) {}

void PackedCodebook::assign(const float* data, size_t rows, uint32_t* index, float* distance2,
                            int threads) const {
  if (rows == 0 || !codes_) return;
  std::vector<const float*> ptr(rows);
  for (size_t i = 0; i < rows; ++i) ptr[i] = data + i * size_t(codes_->dim);
  kmeans::nearest_two(*codes_, ptr.data(), rows, index, distance2, nullptr, threads);
}

void assign_nearest(const Codebook& codebook, const float* data, size_t rows, uint32_t* index,
                    float* distance2, int threads) {
  PackedCodebook(codebook).assign(data, rows, index, distance2, threads);
}

}  // namespace hlm::dsp
