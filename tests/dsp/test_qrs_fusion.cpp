// The QRS detector's lead fusion (dsp/qrs_fusion.h): one lead scaled in place gives the fused
// envelope fuse() gives, to the bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "dsp/qrs_fusion.h"

namespace {

using hlm::dsp::qrs::Fused;
using hlm::dsp::qrs::LeadEnvelope;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Lengths about the 2 s blocks (400 samples) and the 16 blocks the ramps take at once.
TEST(QrsFusion, FusesOneLeadInPlaceToTheBitsOfFuse) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> height(0.0f, 2.0f);
  for (const size_t m : {1, 5, 399, 400, 401, 6400, 6401, 7000, 130000}) {
    LeadEnvelope lead;
    for (size_t i = 0; i < m; ++i) lead.energy.push_back(height(gen));
    for (size_t i = 0; i < m; ++i) lead.slope.push_back(height(gen));
    const std::vector<float> level = hlm::dsp::qrs::qrs_level(lead);
    Fused by_fuse, in_place;
    hlm::dsp::qrs::fuse({lead}, {level}, {std::vector<float>(level.size(), 1.0f)}, by_fuse);
    in_place.energy.assign(3, 7.0f);  // storage the lead is left with
    hlm::dsp::qrs::fuse_in_place(lead, level, in_place);
    EXPECT_TRUE(same_bits(in_place.energy, by_fuse.energy)) << m << " samples";
    EXPECT_TRUE(same_bits(in_place.slope, by_fuse.slope)) << m << " samples";
    EXPECT_EQ(lead.energy.size(), 3u);
  }
}

}  // namespace
