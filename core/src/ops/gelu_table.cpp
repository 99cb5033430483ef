// GELU lookup tables for bfloat16 (see gelu_table.h).
#include "ops/gelu_table.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "util/target_clones.h"

namespace hlm {
namespace {

inline float bf16_to_float(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as c10::BFloat16 does; a NaN stays a quiet NaN. Integer selects
// only, so the loops around it vectorise.
inline uint16_t float_to_bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  const uint32_t nan = 0u - uint32_t((b & 0x7fffffffu) > 0x7f800000u);  // all ones if NaN
  return uint16_t((rounded & ~nan) | (0x7fc0u & nan));
}

struct GeluTables {
  std::vector<uint16_t> value = std::vector<uint16_t>(65536);
  std::vector<float> derivative = std::vector<float>(65536);
  GeluTables() {
    for (uint32_t h = 0; h < 65536; ++h) {
      const double x = bf16_to_float(uint16_t(h));
      double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
      double gelu = x * cdf, slope = cdf + x * pdf;
      if (std::isinf(x)) {  // inf * 0 would give NaN: gelu(-inf) = 0, gelu(inf) = inf
        gelu = x > 0 ? x : 0.0;
        slope = x > 0 ? 1.0 : 0.0;
      }
      value[h] = float_to_bf16(float(gelu));
      derivative[h] = float(slope);
    }
  }
};

const GeluTables& tables() {
  static const GeluTables t;
  return t;
}

#define HLM_TABLE_CLONES HLM_TARGET_CLONES("avx512f", "avx2", "default")

HLM_TABLE_CLONES void lookup(const uint16_t* table, const uint16_t* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

HLM_TABLE_CLONES void scale_by_lookup(const float* table, const uint16_t* dy, const uint16_t* x,
                                      uint16_t* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = float_to_bf16(bf16_to_float(dy[i]) * table[x[i]]);
}

}  // namespace

void gelu_bf16_forward(const uint16_t* x, uint16_t* y, int64_t n) {
  lookup(tables().value.data(), x, y, n);
}

void gelu_bf16_backward(const uint16_t* dy, const uint16_t* x, uint16_t* dx, int64_t n) {
  scale_by_lookup(tables().derivative.data(), dy, x, dx, n);
}

}  // namespace hlm
