// 16 x 16 blocks of floats turned across: for loops that run sixteen independent recursions side
// by side in one vector (the filter's lanes, the detector's coefficient ramps) and read or write
// each one's values in order.
#pragma once
#include <cstddef>

namespace hlm::dsp {

using Sixteen = float __attribute__((vector_size(16 * sizeof(float))));

// The helpers take and return 64-byte vectors, which the default instruction set passes
// differently from AVX-512's; each is inlined into its caller, so no call crosses that ABI.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// One round of the transpose: rows a and b (d apart) swap their off-diagonal d x d blocks.
inline __attribute__((always_inline)) void swap_8(Sixteen& a, Sixteen& b) {
  const Sixteen x =
      __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  b = __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  a = x;
}
inline __attribute__((always_inline)) void swap_4(Sixteen& a, Sixteen& b) {
  const Sixteen x =
      __builtin_shufflevector(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  b = __builtin_shufflevector(a, b, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  a = x;
}
inline __attribute__((always_inline)) void swap_2(Sixteen& a, Sixteen& b) {
  const Sixteen x =
      __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
  b = __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
  a = x;
}
inline __attribute__((always_inline)) void swap_1(Sixteen& a, Sixteen& b) {
  const Sixteen x =
      __builtin_shufflevector(a, b, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
  b = __builtin_shufflevector(a, b, 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  a = x;
}

// r[i][j] becomes r[j][i].
inline __attribute__((always_inline)) void transpose(Sixteen* r) {
  for (size_t i = 0; i < 8; ++i) swap_8(r[i], r[i + 8]);
  for (size_t i = 0; i < 16; ++i)
    if (!(i & 4)) swap_4(r[i], r[i + 4]);
  for (size_t i = 0; i < 16; ++i)
    if (!(i & 2)) swap_2(r[i], r[i + 2]);
  for (size_t i = 0; i < 16; i += 2) swap_1(r[i], r[i + 1]);
}

#pragma GCC diagnostic pop

}  // namespace hlm::dsp
