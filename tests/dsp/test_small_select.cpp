// kth_smallest (dsp/small_select.h): the values std::nth_element puts at k and k - 1, for every
// count and rank on either side of the 16 values one register holds, ties and infinities
// included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "dsp/small_select.h"

namespace {

using hlm::dsp::kth_smallest;

float nth_element_at(std::vector<float> v, size_t k) {
  std::nth_element(v.begin(), v.begin() + ptrdiff_t(k), v.end());
  return v[k];
}

TEST(SmallSelect, GivesTheValueNthElementGivesForEveryCountAndRank) {
  std::mt19937 rng(7);
  const float inf = std::numeric_limits<float>::infinity();
  // Few distinct values, so that most draws hold ties; the infinities bound the +inf padding.
  const std::vector<float> pool{-inf, -2.5f, -1.0f, 0.0f, 0.25f, 0.25f, 1.0f, 3.0f, inf};
  for (size_t count = 1; count <= 20; ++count)
    for (int draw = 0; draw < 200; ++draw) {
      std::vector<float> v(count);
      for (float& x : v)
        x = draw % 2 ? pool[rng() % pool.size()] : std::ldexp(float(rng() % 1000), -7);
      for (size_t k = 0; k < count; ++k) {
        std::vector<float> copy = v;
        ASSERT_EQ(kth_smallest(copy.data(), count, k), nth_element_at(v, k))
            << "count " << count << ", k " << k << ", draw " << draw;
        if (k == 0) continue;
        copy = v;
        float before = 0.0f;
        ASSERT_EQ(kth_smallest(copy.data(), count, k, &before), nth_element_at(v, k));
        ASSERT_EQ(before, nth_element_at(v, k - 1))
            << "count " << count << ", k " << k << ", draw " << draw;
      }
    }
}

TEST(SmallSelect, ReturnsOneOfTheValuesWhenANanIsAmongThem) {
  for (size_t count : {3u, 8u, 15u, 16u, 17u}) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = float(count - i);
    v[count / 2] = std::numeric_limits<float>::quiet_NaN();
    for (size_t k = 0; k < count; ++k) {
      std::vector<float> copy = v;
      const float x = kth_smallest(copy.data(), count, k);
      const bool among = std::isnan(x) || std::find(v.begin(), v.end(), x) != v.end();
      EXPECT_TRUE(among) << "count " << count << ", k " << k << ": " << x;
    }
  }
}

}  // namespace
