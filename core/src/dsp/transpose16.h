// 16 x 16 blocks of floats turned across: for loops that run sixteen independent recursions side
// by side (the filter's lanes, the detector's coefficient ramps) and read or write each one's
// values in order. A block is held as 8-float halves, whose shuffles AVX2 and AVX-512 both do in
// single instructions (16-float vectors would leave AVX2 moving one value at a time).
#pragma once
#include <cstddef>

namespace hlm::dsp {

using Float8 = float __attribute__((vector_size(8 * sizeof(float))));

// Row i of the block is lo[i] (columns 0-7) then hi[i] (columns 8-15).
struct Block16 {
  Float8 lo[16], hi[16];
};

// The 8 x 8 block r[0..7] turned across in place: three rounds of two-row shuffles.
inline __attribute__((always_inline)) void transpose8(Float8* r) {
  Float8 t[8], u[8];
  for (size_t i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (size_t i = 0; i < 8; i += 4)
    for (size_t k = 0; k < 2; ++k) {
      u[i + 2 * k] = __builtin_shufflevector(t[i + k], t[i + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * k + 1] =
          __builtin_shufflevector(t[i + k], t[i + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (size_t j = 0; j < 4; ++j) {
    r[j] = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[j + 4] = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// Row i, column j becomes row j, column i: each quadrant turned, the off-diagonal ones swapped.
inline __attribute__((always_inline)) void transpose(Block16& b) {
  transpose8(b.lo);
  transpose8(b.lo + 8);
  transpose8(b.hi);
  transpose8(b.hi + 8);
  for (size_t i = 0; i < 8; ++i) {
    const Float8 x = b.hi[i];
    b.hi[i] = b.lo[8 + i];
    b.lo[8 + i] = x;
  }
}

}  // namespace hlm::dsp
