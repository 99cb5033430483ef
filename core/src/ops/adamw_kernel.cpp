// One-pass AdamW arithmetic (see adamw_kernel.h).
#include "ops/adamw_kernel.h"

#include <algorithm>
#include <cmath>

#include "util/target_clones.h"

namespace hlm {

HLM_TARGET_CLONES("avx512f", "avx2", "default")
void adamw_update(float* __restrict p, const float* __restrict g, float* __restrict m,
                  float* __restrict v, int64_t n, AdamWScalars s) {
  for (int64_t i = 0; i < n; ++i) {
    const float grad = g[i] * s.grad_scale;
    const float mi = m[i] * s.beta1 + grad * s.one_minus_beta1;
    const float vi = v[i] * s.beta2 + grad * grad * s.one_minus_beta2;
    const float denom = std::sqrt(vi) / s.sqrt_bias_correction2 + s.eps;
    p[i] = p[i] * s.decay + -s.step_size * (mi / denom);
    m[i] = mi;
    v[i] = vi;
  }
}

HLM_TARGET_CLONES("avx512f", "avx2", "default") double sum_of_squares(const float* x, int64_t n) {
  // 16 float partial sums (one vector) per block of 4096, folded into double: float alone
  // loses digits over millions of terms.
  double total = 0;
  for (int64_t start = 0; start < n; start += 4096) {
    const int64_t end = std::min(n, start + 4096);
    float lanes[16] = {};
    int64_t i = start;
    for (; i + 16 <= end; i += 16)
      for (int k = 0; k < 16; ++k) lanes[k] += x[i + k] * x[i + k];
    for (; i < end; ++i) lanes[0] += x[i] * x[i];
    for (float lane : lanes) total += lane;
  }
  return total;
}

}  // namespace hlm
