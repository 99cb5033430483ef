// Exact GELU on bfloat16 by table: a bfloat16 has 65,536 bit patterns, so x * Phi(x) (as a
// bfloat16) and its derivative Phi(x) + x * phi(x) (as a float) are computed once, in double,
// for every one of them. The forward is then a 128 KiB lookup and the backward a 256 KiB
// lookup and a multiply, both resident in L2: faster than LibTorch's vectorised erf in both
// directions (docs/benchmarks.md has the figures). Kept apart from LibTorch so it builds with
// its own flags. bfloat16 values travel as their uint16 bits.
#pragma once
#include <cstdint>

namespace hlm {

// y = gelu(x), correctly rounded to bfloat16.
void gelu_bf16_forward(const uint16_t* x, uint16_t* y, int64_t n);

// dx = dy * gelu'(x), the product rounded to bfloat16.
void gelu_bf16_backward(const uint16_t* dy, const uint16_t* x, uint16_t* dx, int64_t n);

}  // namespace hlm
