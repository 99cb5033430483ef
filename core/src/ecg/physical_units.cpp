// Digital samples to physical units, the loop every tokenizer and detector input starts with.
#include <cstring>

#include "hlm/ecg.h"
#include "util/target_clones.h"

namespace hlm {

// The value is worked out for every sample and an invalid one's bits are masked to +0 after,
// so the loop has no branch and vectorises; the division stays a division (a reciprocal
// would move the last bit of some samples). The difference is taken in double, exact for any
// two int32 values, where an int subtraction from kInvalidSample would overflow.
HLM_VECTOR_CLONES
void to_physical(const int32_t* digital, size_t n, int baseline, double gain, float* out) {
  for (size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>((static_cast<double>(digital[i]) - baseline) / gain);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= -static_cast<uint32_t>(digital[i] != kInvalidSample);
    std::memcpy(&out[i], &bits, sizeof bits);
  }
}

HLM_VECTOR_CLONES
bool any_invalid(const int32_t* digital, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= uint32_t(digital[i] == kInvalidSample);
  return any != 0;
}

}  // namespace hlm
