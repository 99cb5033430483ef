// The waves a pause holds beyond the regular beats' own (qrs_pause_waves.h): a wave's form is
// the same wherever the record puts it, whatever the leads' weights there.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsp/qrs_envelope.h"
#include "dsp/qrs_fusion.h"
#include "dsp/qrs_pause_waves.h"

namespace {

using hlm::dsp::qrs::kBlock;
using hlm::dsp::qrs::kSlowStretch;
using hlm::dsp::qrs::LeadEnvelope;
using hlm::dsp::qrs::PauseWaves;
using hlm::dsp::qrs::TemplateBeats;

constexpr int64_t kBeats = 8;     // regular beats, one per block of the main band
constexpr int64_t kWaveAt = 60;   // main-band samples after a beat: the extra wave
constexpr int64_t kLength = 120;  // delays the template covers

// A slow band (every kSlowStretch main-band samples) with a beat at the start of each block and,
// after the last beat and after the one in block 1, a wave `size` tall at kWaveAt.
std::vector<float> band(float size) {
  std::vector<float> b(size_t((kBeats + 1) * kBlock / kSlowStretch), 0.0f);
  for (int64_t k = 0; k < kBeats; ++k) b[size_t(k * kBlock / kSlowStretch)] = 1.0f;
  for (const int64_t beat : {int64_t(1), kBeats - 1})
    b[size_t((beat * kBlock + kWaveAt) / kSlowStretch)] = size;
  return b;
}

// The regular beats: the first kBeats - 1, read kLength samples each, newest first.
TemplateBeats regular_beats() {
  TemplateBeats t;
  for (int64_t k = kBeats - 2; k >= 0; --k)
    if (k != 1) t.starts.push_back(k * kBlock), t.stops.push_back(k * kBlock + kLength);
  return t;
}

// The form of the wave after the beat of block `beat`, at kWaveAt.
std::vector<float> form_at(const PauseWaves& waves, int64_t beat) {
  std::vector<float> out;
  waves.differences(beat * kBlock + kWaveAt, kWaveAt, 1.0f, out);
  return out;
}

// A lead's weight is its quality in each block, which changes along the record: one lead, or
// two whose weights change together, give the same form in a block weighted 1 and in one
// weighted 100.
TEST(PauseWaves, AWavesFormIsTheSameWhateverTheLeadsWeightsThere) {
  std::vector<float> weight(kBeats + 1, 1.0f);
  weight[kBeats - 1] = 100.0f;
  for (const size_t leads : {size_t(1), size_t(2)}) {
    std::vector<LeadEnvelope> slow(leads);
    std::vector<std::vector<float>> weights(leads, weight);
    for (size_t k = 0; k < leads; ++k) slow[k].band = band(0.5f + 0.25f * float(k));
    PauseWaves waves({slow, weights});
    waves.fit(regular_beats(), kLength, 15);
    ASSERT_GT(waves.length(), kWaveAt);
    const std::vector<float> early = form_at(waves, 1), late = form_at(waves, kBeats - 1);
    ASSERT_EQ(early.size(), leads);
    ASSERT_EQ(late.size(), leads);
    for (size_t k = 0; k < leads; ++k) {
      EXPECT_NEAR(early[k], (0.5f + 0.25f * float(k)) / float(leads), 1e-6f) << k;
      EXPECT_NEAR(late[k], early[k], 1e-6f) << leads << " lead(s), lead " << k;
    }
  }
}

// Of two leads, each counts by its share of the weights there, as the residual weighs them.
TEST(PauseWaves, EachLeadCountsByItsShareOfTheWeights) {
  std::vector<LeadEnvelope> slow(2);
  slow[0].band = band(1.0f);
  slow[1].band = band(1.0f);
  const std::vector<std::vector<float>> weights = {std::vector<float>(kBeats + 1, 3.0f),
                                                   std::vector<float>(kBeats + 1, 1.0f)};
  PauseWaves waves({slow, weights});
  waves.fit(regular_beats(), kLength, 15);
  const std::vector<float> form = form_at(waves, kBeats - 1);
  ASSERT_EQ(form.size(), 2u);
  EXPECT_NEAR(form[0], 0.75f, 1e-6f);
  EXPECT_NEAR(form[1], 0.25f, 1e-6f);
  EXPECT_NEAR(waves.residual(kBeats * kBlock - kBlock + kWaveAt, kWaveAt, 1.0f), 1.0f, 1e-6f);
}

}  // namespace
