// The k-th smallest of a few floats: the medians and percentiles the QRS detector takes per
// sample and per beat, over 16 values or fewer (a ring of 8, the newest 15 regular beats).
#pragma once
#include <cstddef>

namespace hlm::dsp {

// The value std::nth_element(v, v + k, v + count) puts at v[k]: the k-th smallest (0-based) of
// v[0, count), k < count. v may be reordered. Up to 16 values on a CPU with AVX-512, each value's
// rank is counted in one register; otherwise, or where a NaN leaves no value at rank k, it
// falls back to std::nth_element. With `before` (k > 0), *before gets the (k-1)-th smallest too:
// what a median of an even count needs, from the same ranks.
float kth_smallest(float* v, size_t count, size_t k, float* before = nullptr);

}  // namespace hlm::dsp
