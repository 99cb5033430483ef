// The envelope's peak picker (see local_maxima in qrs_envelope.h). A sample is a peak where the
// largest of the `separation` samples before it is below it and the largest of those after it
// is not above it: both come from one array of sliding maxima over windows of that length,
// built by doubling (windows of 1, 2, 4, ... samples, then two that overlap), each pass a loop
// that vectorises. The comparisons are the definition's, so the peaks are too, for an envelope
// without NaN.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dsp/qrs_envelope.h"
#include "util/target_clones.h"

namespace hlm::dsp::qrs {

namespace {
// out[s] = max(a[s], a[s + shift]) for s < count.
HLM_VECTOR_CLONES
void pairwise_max(const float* __restrict a, int64_t shift, int64_t count, float* __restrict out) {
  for (int64_t s = 0; s < count; ++s) out[s] = std::max(a[s], a[s + shift]);
}

// flag[i] = 1 where v[i] is above every value of `before` and not below any of `after`.
HLM_VECTOR_CLONES
void peak_flags(const float* __restrict v, const float* __restrict before,
                const float* __restrict after, int64_t count, uint8_t* __restrict flag) {
  for (int64_t i = 0; i < count; ++i) flag[i] = uint8_t((before[i] < v[i]) & (after[i] <= v[i]));
}
}  // namespace

std::vector<int64_t> local_maxima(const std::vector<float>& h, int64_t separation) {
  const int64_t m = static_cast<int64_t>(h.size());
  std::vector<int64_t> out;
  if (m < 3) return out;
  // A window wider than the signal finds what one as wide as the signal does.
  const int64_t w = std::clamp<int64_t>(separation, 1, m);
  // Samples 1 .. m - 2 are taken kChunk at a time, so that every pass stays in cache. u holds
  // the chunk's samples and w more on each side (lower than any sample beyond the signal's
  // ends, so no window is clipped); two buffers take turns as the windows double.
  constexpr int64_t kChunk = 1024;
  const size_t most_values = size_t(kChunk + 2 * w);
  std::vector<float> u(most_values), a(most_values), b(most_values);
  std::vector<uint8_t> flag(kChunk);
  constexpr float kBelow = -std::numeric_limits<float>::infinity();
  for (int64_t c0 = 1; c0 < m - 1; c0 += kChunk) {
    const int64_t count = std::min(kChunk, m - 1 - c0), n = count + 2 * w;
    // u[k] = h[c0 - w + k].
    const int64_t from = std::max<int64_t>(0, c0 - w), to = std::min(m, c0 + count + w);
    std::fill(u.begin(), u.begin() + (from - (c0 - w)), kBelow);
    std::memcpy(u.data() + (from - (c0 - w)), h.data() + from, size_t(to - from) * sizeof(float));
    std::fill(u.begin() + (to - (c0 - w)), u.begin() + n, kBelow);
    // Windows of `span` samples: cur[s] = max(u[s .. s + span - 1]) for s <= n - span.
    const float* cur = u.data();
    int64_t span = 1;
    for (float* next = a.data(); 2 * span <= w; next = next == a.data() ? b.data() : a.data()) {
      pairwise_max(cur, span, n - 2 * span + 1, next);
      cur = next;
      span *= 2;
    }
    // Windows of w samples from two of `span` that overlap: most[t] = max(u[t .. t + w - 1]),
    // the w samples before sample c0 + t; most[t + w + 1] the w after it.
    float* most = cur == a.data() ? b.data() : a.data();
    pairwise_max(cur, w - span, n - w + 1, most);
    peak_flags(u.data() + w, most, most + w + 1, count, flag.data());
    // Peaks are a few per beat: eight flags are skipped at a time where none is set.
    for (int64_t t = 0; t < count;) {
      uint64_t eight = 0;
      if (t + 8 <= count) std::memcpy(&eight, flag.data() + t, sizeof eight);
      if (t + 8 <= count && eight == 0) {
        t += 8;
        continue;
      }
      if (flag[size_t(t)]) out.push_back(c0 + t);
      ++t;
    }
  }
  return out;
}

}  // namespace hlm::dsp::qrs
