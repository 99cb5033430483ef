// The arithmetic of one-pass AdamW (ops/fused_adamw.h) on plain float arrays. Kept apart
// from LibTorch so it builds with its own flags: no FMA contraction (every instruction-set
// clone gives the same bits, so exact resume does not depend on the machine) and no errno
// from sqrt (so the loop vectorises).
#pragma once
#include <cstdint>

namespace hlm {

struct AdamWScalars {
  float grad_scale, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, sqrt_bias_correction2,
      eps, step_size;
};

// torch::optim::AdamW::step's operations, in its order and precision:
// p *= 1 - lr*wd; m = m*b1 + g*(1-b1); v = v*b2 + g*g*(1-b2);
// p += -step_size * m / (sqrt(v)/sqrt(bc2) + eps), with g = gradient * grad_scale.
void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, AdamWScalars s);

// Sum of x[i]^2, in float within blocks of 4096 and in double across them.
double sum_of_squares(const float* x, int64_t n);

}  // namespace hlm
