// kth_smallest (see small_select.h): ranks counted in one AVX-512 register for 16 values or
// fewer, std::nth_element otherwise.
#include "dsp/small_select.h"

#include <algorithm>
#include <limits>

#include "util/target_clones.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>
#define HLM_SMALL_SELECT_AVX512 1
#endif

namespace hlm::dsp {
namespace {

constexpr size_t kLanes = 16;

#ifdef HLM_SMALL_SELECT_AVX512
// Value i's rank is the count of values below it plus the equal ones before it, so the ranks
// are 0 .. count-1 and rank k holds the value nth_element would place at k. Lanes past count
// hold +inf and rank count or above. Returns false when no lane has rank k, or k - 1 with
// `before` (a NaN compares false both ways).
__attribute__((target("arch=x86-64-v4"))) bool kth_in_register(const float* v, size_t count,
                                                               size_t k, float* out,
                                                               float* before) {
  const __mmask16 real = __mmask16((1u << count) - 1);
  const __m512 values =
      _mm512_mask_loadu_ps(_mm512_set1_ps(std::numeric_limits<float>::infinity()), real, v);
  const __m512i one = _mm512_set1_epi32(1);
  __m512i rank = _mm512_setzero_si512();
  for (unsigned j = 0; j < count; ++j) {
    const __m512 vj = _mm512_set1_ps(v[j]);
    const __mmask16 after_j = __mmask16(~0u << (j + 1));
    const __mmask16 above_vj = _mm512_cmp_ps_mask(vj, values, _CMP_LT_OQ) |
                               (_mm512_cmp_ps_mask(vj, values, _CMP_EQ_OQ) & after_j);
    rank = _mm512_mask_add_epi32(rank, above_vj, rank, one);
  }
  const __mmask16 at_k = _mm512_cmpeq_epi32_mask(rank, _mm512_set1_epi32(int(k))) & real;
  const __mmask16 at_before =
      before ? _mm512_cmpeq_epi32_mask(rank, _mm512_set1_epi32(int(k) - 1)) & real : 1;
  if (at_k == 0 || at_before == 0) return false;
  *out = v[__builtin_ctz(at_k)];
  if (before) *before = v[__builtin_ctz(at_before)];
  return true;
}
#endif

}  // namespace

float kth_smallest(float* v, size_t count, size_t k, float* before) {
#ifdef HLM_SMALL_SELECT_AVX512
  float out;
  if (count <= kLanes && cpu_has_x86_64_v4() && kth_in_register(v, count, k, &out, before))
    return out;
#endif
  std::nth_element(v, v + k, v + count);
  if (before) *before = *std::max_element(v, v + k);  // the k values before v[k] are no larger
  return v[k];
}

}  // namespace hlm::dsp
