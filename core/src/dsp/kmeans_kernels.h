// The codebook packed for blocked distance computations, and the kernel that finds each row's
// nearest and second-nearest codes (shared by assign_nearest and k-means).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hlm/dsp/kmeans.h"

namespace hlm::dsp::kmeans {

constexpr int kCodeTile = 16;

// Codes laid out tile by tile, each tile dim x 16 so the 16 codes of one coordinate are
// contiguous; missing codes of the last tile are zero with an infinite norm.
struct PackedCodes {
  int dim = 0, tiles = 0;
  std::vector<float> values, norms;
};
PackedCodes pack(const Codebook& codebook);

// Squared Euclidean distance, vectorised (eight partial sums).
float squared_distance(const float* a, const float* b, int dim);

// For `count` rows given by pointers: the nearest code (ties to the lower index), the squared
// distance to it and, if second is not null, to the second-nearest code (+inf with one code).
// Distances come from ||x||^2 - 2 x.c + ||c||^2, clamped at 0. Runs on `threads` threads in
// fixed chunks, so the results do not depend on the thread count.
void nearest_two(const PackedCodes& codes, const float* const* rows, size_t count, uint32_t* code,
                 float* first, float* second, int threads);

}  // namespace hlm::dsp::kmeans
