// Digital samples to physical units (hlm/ecg.h): every sample as the plain formula gives it,
// to the bit, whatever instruction set's loop runs; invalid samples at 0.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "hlm/ecg.h"

namespace {

// The formula one sample at a time, as a reader of the WFDB documentation would write it.
float expected(int32_t d, int baseline, double gain) {
  return d == hlm::kInvalidSample ? 0.0f : static_cast<float>((d - baseline) / gain);
}

TEST(PhysicalUnits, EverySampleIsTheFormulasToTheBit) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> adc(-32768, 32767);
  // Lengths around the vector widths, so the loop's remainder is covered too.
  for (const size_t n : {size_t(0), size_t(1), size_t(7), size_t(17), size_t(1000)}) {
    std::vector<int32_t> d(n);
    for (int32_t& v : d) v = adc(rng);
    for (size_t i = 3; i < n; i += 5) d[i] = hlm::kInvalidSample;
    for (const auto& [baseline, gain] : {std::pair{0, 200.0}, {1024, 200.0}, {-77, 3.3}}) {
      std::vector<float> out(n, -1.0f);
      hlm::to_physical(d.data(), n, baseline, gain, out.data());
      for (size_t i = 0; i < n; ++i) {
        const float want = expected(d[i], baseline, gain);
        ASSERT_EQ(std::memcmp(&out[i], &want, sizeof want), 0)
            << "sample " << i << " of " << n << ": " << d[i] << " gave " << out[i] << ", want "
            << want;
      }
      EXPECT_EQ(hlm::any_invalid(d.data(), n), n > 3) << n;
    }
  }
}

// An invalid sample is 0 even with a positive baseline, where the difference in int would
// overflow; a record's physical() uses the default gain 200 where the header gave 0.
TEST(PhysicalUnits, InvalidSamplesAreZeroAndGainZeroMeans200) {
  hlm::Record r;
  r.signals.resize(1);
  r.signals[0].gain = 0.0;
  r.signals[0].baseline = 1000;
  r.digital = {{1400, hlm::kInvalidSample, 600}};
  EXPECT_EQ(r.physical(0), (std::vector<float>{2.0f, 0.0f, -2.0f}));
  EXPECT_FALSE(std::signbit(r.physical(0)[1]));
  EXPECT_FALSE(hlm::any_invalid(r.digital[0].data(), 1));
  EXPECT_TRUE(hlm::any_invalid(r.digital[0].data(), 2));
}

}  // namespace
