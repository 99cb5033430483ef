// The k-th smallest of a few floats: the medians and percentiles the QRS detector takes per
// sample and per beat, over 16 values or fewer (a ring of 8, the newest 15 regular beats).
#pragma once
#include <cstddef>

namespace hlm::dsp {

// The k-th smallest (0-based) of v[0, count), k < count: a value equal (==) to the one
// std::nth_element(v, v + k, v + count) puts at v[k] (of equal values, -0 and +0, either may
// come back). v may be reordered. Up to 16 values, where built by GCC for x86-64 and run on a
// CPU with AVX-512, each value's rank is counted in one register; otherwise std::nth_element.
// With a NaN among the values the result is unspecified (it may depend on the CPU). With
// `before` (k > 0), *before gets the (k-1)-th smallest too: what a median of an even count
// needs, from the same ranks.
float kth_smallest(float* v, size_t count, size_t k, float* before = nullptr);

}  // namespace hlm::dsp
