// Task af scored by beat: each beat of a segment gets its segment's probabilities (the mean of
// the segments that hold it, where they overlap) and its own reference class; unknown beats are
// left out.
#include <gtest/gtest.h>

#include <set>

#include "hlm/errors.h"
#include "tasks/beats_of_segments.h"

namespace {

hlm::ScoredItem segment(uint64_t first, int64_t length, size_t record, int truth, float p_af) {
  hlm::ScoredItem s;
  s.key = first;
  s.record = record;
  s.truth = truth;
  s.probs = {1.0f - p_af, p_af};
  s.parts["trees"] = s.probs;
  s.length = length;
  return s;
}

}  // namespace

TEST(BeatsOfSegments, EachBeatTakesItsSegmentsPredictionAndItsOwnRhythm) {
  // Record 0's AF episode covers beats 3-7; record 1 starts at beat 100, in AF from 104.
  const std::set<uint64_t> in_af = {3, 4, 5, 6, 7, 104, 105};
  const auto truth = [&](size_t, uint64_t beat) { return in_af.count(beat) ? 1 : 0; };
  // Given out of key order: the items come back in it.
  const std::vector<hlm::ScoredItem> segments = {
      segment(100, 6, 1, 0, 0.2f), segment(0, 4, 0, 0, 0.4f), segment(4, 4, 0, 1, 0.9f)};
  const auto beats = hlm::beats_of_segments(segments, truth);
  ASSERT_EQ(beats.size(), 14u);
  const std::vector<uint64_t> keys = {0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 104, 105};
  const std::vector<int> truths = {0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1};
  const std::vector<float> p_af = {0.4f, 0.4f, 0.4f, 0.4f, 0.9f, 0.9f, 0.9f,
                                   0.9f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f};
  for (size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(beats[i].key, keys[i]);
    EXPECT_EQ(beats[i].truth, truths[i]) << "beat " << keys[i];
    EXPECT_FLOAT_EQ(beats[i].probs[1], p_af[i]) << "beat " << keys[i];
    EXPECT_EQ(beats[i].record, keys[i] >= 100 ? 1u : 0u);
    EXPECT_EQ(beats[i].length, 1);
    EXPECT_TRUE(beats[i].parts.empty());
  }
}

TEST(BeatsOfSegments, LeavesOutUnknownBeatsAndTheGapsBetweenSegments) {
  const auto unknown_after_2 = [](size_t, uint64_t beat) { return beat >= 2 ? -1 : 0; };
  EXPECT_EQ(hlm::beats_of_segments({segment(0, 5, 0, 0, 0.1f)}, unknown_after_2).size(), 2u);
  // A segment left out (its class unknown) leaves a gap in its record: no beat there.
  const auto none = [](size_t, uint64_t) { return 0; };
  const auto beats =
      hlm::beats_of_segments({segment(0, 3, 0, 0, 0.1f), segment(6, 3, 0, 0, 0.3f)}, none);
  ASSERT_EQ(beats.size(), 6u);
  const std::vector<uint64_t> keys = {0, 1, 2, 6, 7, 8};
  for (size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(beats[i].key, keys[i]);
    EXPECT_FLOAT_EQ(beats[i].probs[1], i < 3 ? 0.1f : 0.3f);
  }
}

// Overlapping segments (by_beat_overlap): a beat takes the mean of those that hold it.
TEST(BeatsOfSegments, ABeatInOverlappingSegmentsTakesTheirMean) {
  const auto none = [](size_t, uint64_t) { return 0; };
  // Beats 0-1 in the first segment alone, 2-3 in two, 4-5 in all three, 6-7 in the last two.
  const auto beats = hlm::beats_of_segments(
      {segment(0, 6, 0, 0, 0.1f), segment(2, 6, 0, 0, 0.4f), segment(4, 6, 0, 1, 0.7f)}, none);
  ASSERT_EQ(beats.size(), 10u);
  const std::vector<float> p_af = {0.1f, 0.1f, 0.25f, 0.25f, 0.4f, 0.4f, 0.55f, 0.55f, 0.7f, 0.7f};
  for (size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(beats[i].key, i);
    EXPECT_NEAR(beats[i].probs[1], p_af[i], 1e-6) << "beat " << i;
    EXPECT_NEAR(beats[i].probs[0] + beats[i].probs[1], 1.0, 1e-6);
  }
}
