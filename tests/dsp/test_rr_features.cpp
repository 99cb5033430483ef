// RR features: a regular rhythm reads as typical (log ratios 0), a premature beat as early
// with a long interval after it, at any heart rate; pauses and zero intervals stay bounded;
// the rhythm around a beat tells atrial fibrillation from one premature beat.
#include <gtest/gtest.h>

#include <cmath>

#include "hlm/dsp/rr_features.h"

namespace {

std::vector<float> features(const std::vector<float>& rr) {
  return hlm::rr_features(rr.data(), rr.size());
}

}  // namespace

TEST(RrFeatures, ARegularRhythmIsTypicalAtAnyRate) {
  for (float rr : {0.4f, 0.8f, 1.5f}) {
    const auto f = features(std::vector<float>(40, rr));
    for (size_t i = 0; i < 40; ++i) {
      EXPECT_NEAR(f[i * 3 + 0], 0.0, 1e-6);
      EXPECT_NEAR(f[i * 3 + 1], 0.0, 1e-6);
      EXPECT_NEAR(f[i * 3 + 2], std::log(rr), 1e-6);
    }
  }
}

TEST(RrFeatures, APrematureBeatComesEarlyAndIsFollowedByACompensatoryPause) {
  for (float rr : {0.5f, 1.0f}) {
    std::vector<float> intervals(30, rr);
    intervals[15] = 0.6f * rr;  // beat 15 comes early
    intervals[16] = 1.4f * rr;  // and the next one late
    const auto f = features(intervals);
    EXPECT_LT(f[15 * 3 + 0], -0.4);
    EXPECT_GT(f[15 * 3 + 1], 0.25);
    // Its neighbours stay near typical; the features do not depend on the rate.
    EXPECT_NEAR(f[10 * 3 + 0], 0.0, 0.05);
    EXPECT_NEAR(features(std::vector<float>(intervals))[15 * 3], f[15 * 3], 1e-6);
  }
}

TEST(RrFeatures, ZeroIntervalsAndLongPausesStayBounded) {
  std::vector<float> rr = {0.0f, 0.8f, 0.0f, 40.0f, 0.8f, 0.8f};
  const auto f = features(rr);
  for (float v : f) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_LE(std::fabs(v), 2.0f);
  }
  EXPECT_TRUE(features({}).empty());
  EXPECT_EQ(features({0.0f}), std::vector<float>(3, 0.0f));
}

namespace {

std::vector<float> record_rhythm(const std::vector<float>& rr) {
  return hlm::record_rhythm_features(rr.data(), rr.size());
}

}  // namespace

// A run of supraventricular tachycardia looks typical against its own local average but short
// against the record; the beats around it stay typical.
TEST(RecordRhythmFeatures, ATachycardiaRunIsShortAgainstTheRecord) {
  std::vector<float> rr(100, 0.8f);
  for (size_t i = 40; i < 70; ++i) rr[i] = 0.4f;
  const auto local = features(rr);
  const auto f = record_rhythm(rr);
  constexpr int k = hlm::kRecordRhythmFeatureCount;
  EXPECT_NEAR(local[55 * 3 + 0], 0.0, 1e-6);  // the local view: nothing unusual
  EXPECT_NEAR(f[55 * k + 0], std::log(0.5), 1e-6);
  EXPECT_NEAR(f[55 * k + 1], std::log(0.5), 1e-6);
  EXPECT_NEAR(f[10 * k + 0], 0.0, 1e-6);
  EXPECT_NEAR(f[90 * k + 1], 0.0, 1e-6);
  // At the run's edges: "before" is the interval into the beat, "after" the one out of it.
  EXPECT_NEAR(f[39 * k + 0], 0.0, 1e-6);
  EXPECT_NEAR(f[39 * k + 1], std::log(0.5), 1e-6);
  EXPECT_NEAR(f[69 * k + 0], std::log(0.5), 1e-6);
  EXPECT_NEAR(f[69 * k + 1], 0.0, 1e-6);
}

// In an irregular rhythm every beat's neighbourhood is irregular; one premature beat in a
// regular rhythm does not make its neighbourhood irregular, and neither does the heart rate.
TEST(RecordRhythmFeatures, IrregularityTellsAnIrregularRhythmFromOnePrematureBeat) {
  std::vector<float> regular(60, 0.8f);
  regular[30] = 0.5f;
  regular[31] = 1.1f;
  std::vector<float> irregular(60);
  for (size_t i = 0; i < irregular.size(); ++i)
    irregular[i] = (i % 3 == 0 ? 0.5f : i % 3 == 1 ? 1.0f : 0.75f);
  const auto quiet = record_rhythm(regular);
  const auto busy = record_rhythm(irregular);
  constexpr int k = hlm::kRecordRhythmFeatureCount;
  for (size_t i = 0; i < 60; ++i) {
    EXPECT_NEAR(quiet[i * k + 2], 0.0, 1e-6) << i;
    EXPECT_GT(busy[i * k + 2], 0.25) << i;
  }
  // The premature beat itself is still early against the record.
  EXPECT_LT(quiet[30 * k + 0], -0.4);
  std::vector<float> faster(regular);
  for (auto& x : faster) x *= 0.5f;
  const auto scaled = record_rhythm(faster);
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_NEAR(scaled[i], quiet[i], 1e-5) << i;
}

TEST(RecordRhythmFeatures, ZeroIntervalsAndLongPausesStayBounded) {
  const auto f = record_rhythm({0.0f, 0.8f, 0.0f, 40.0f, 0.8f, 0.8f});
  for (float v : f) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_LE(std::fabs(v), 2.0f);
  }
  // Intervals alternating between the clamps: the irregularity stops at 2 as well.
  std::vector<float> wild(30);
  for (size_t i = 0; i < wild.size(); ++i) wild[i] = i % 2 ? 0.01f : 50.0f;
  const auto w = record_rhythm(wild);
  EXPECT_FLOAT_EQ(w[15 * hlm::kRecordRhythmFeatureCount + 2], 2.0f);
  EXPECT_TRUE(record_rhythm({}).empty());
  EXPECT_EQ(record_rhythm({0.0f}), std::vector<float>(hlm::kRecordRhythmFeatureCount, 0.0f));
}

namespace {

std::vector<float> rhythm_context(const std::vector<float>& rr) {
  return hlm::rhythm_context_features(rr.data(), rr.size());
}

}  // namespace

// A premature atrial beat in sinus rhythm: its own early interval and pause are left out, so
// it sits in a regular context; every beat of an irregular rhythm sits in an irregular one.
TEST(RhythmContextFeatures, APrematureBeatSitsInARegularContextAndAnIrregularRhythmInItsOwn) {
  std::vector<float> sinus(100, 0.8f);
  sinus[50] = 0.5f;  // premature beat 50, then a pause
  sinus[51] = 1.1f;
  const auto quiet = rhythm_context(sinus);
  constexpr int k = hlm::kRhythmContextFeatureCount;
  // The three changes it makes are those into beats 50 (early), 51 (the pause) and 52 (back).
  for (size_t beat : {50, 51, 52})
    for (int j = 0; j < k; ++j) EXPECT_NEAR(quiet[beat * k + size_t(j)], 0.0, 1e-6) << beat;
  // Beat 48 sees the changes into beats 18-78 but its own (46-50): of those 56, the two large
  // ones are the pause (|log(1.1 / 0.5)| = 0.79) and the return (0.32); beat 49 sees the
  // return alone.
  EXPECT_NEAR(quiet[48 * k + 1], 2.0 / 56.0, 1e-6);
  EXPECT_NEAR(quiet[49 * k + 1], 1.0 / 56.0, 1e-6);
  EXPECT_NEAR(quiet[48 * k + 0], 0.0, 1e-6);
  std::vector<float> irregular(100);
  for (size_t i = 0; i < irregular.size(); ++i)
    irregular[i] = (i % 3 == 0 ? 0.5f : i % 3 == 1 ? 1.0f : 0.75f);
  const auto busy = rhythm_context(irregular);
  for (size_t beat = 0; beat < 100; ++beat) {
    EXPECT_GT(busy[beat * k + 0], 0.25) << beat;
    EXPECT_NEAR(busy[beat * k + 1], 1.0, 1e-6) << beat;  // every change here is above 0.1
    EXPECT_GT(busy[beat * k + 2], 0.25) << beat;
  }
  // Ratios of intervals: the heart rate does not matter.
  std::vector<float> faster(irregular);
  for (auto& x : faster) x *= 0.5f;
  const auto scaled = rhythm_context(faster);
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_NEAR(scaled[i], busy[i], 1e-5) << i;
  // Two beats hold no change.
  EXPECT_EQ(rhythm_context({0.0f, 0.8f}), std::vector<float>(2 * k, 0.0f));
}

namespace {

std::vector<float> within_context(const std::vector<float>& rr) {
  return hlm::rr_within_context(rr.data(), rr.size());
}

}  // namespace

// A premature beat in sinus rhythm lies far below the intervals around it, and its pause far
// above; an early beat in an irregular rhythm lies within the spread of its neighbours'.
TEST(RrWithinContext, APrematureBeatStandsOutOfARegularRhythmNotOfAnIrregularOne) {
  constexpr int k = hlm::kRrWithinContextCount;
  std::vector<float> sinus(100);
  for (size_t i = 0; i < sinus.size(); ++i) sinus[i] = 0.8f + (i % 2 ? 0.01f : -0.01f);
  sinus[50] = 0.5f;  // premature beat 50, then a pause
  sinus[51] = 1.1f;
  const auto quiet = within_context(sinus);
  // Around beat 50 the intervals are 0.79 and 0.81: their interquartile range in log units is
  // 0.025, above the floor. Both clamp: log(0.5 / 0.8) / 0.025 is -19, log(1.1 / 0.8) / 0.025
  // is +13.
  EXPECT_FLOAT_EQ(quiet[50 * k + 0], -10.0f);
  EXPECT_FLOAT_EQ(quiet[50 * k + 1], 10.0f);
  // Beat 30, far from it, lies within its own rhythm: at most one interquartile range from its
  // neighbours' median.
  EXPECT_LE(std::fabs(quiet[30 * k + 0]), 1.0f + 1e-4f);
  // An irregular rhythm (intervals 0.5-1.1 s at random): no beat lies far out of it.
  std::vector<float> irregular(100);
  uint64_t state = 12345;
  for (auto& x : irregular) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = 0.5f + 0.6f * float(state >> 40) / float(1ULL << 24);
  }
  const auto busy = within_context(irregular);
  for (size_t beat = 1; beat + 1 < irregular.size(); ++beat)
    EXPECT_LT(std::fabs(busy[beat * k + 0]), 2.5f) << beat;
  // Ratios of intervals: the heart rate does not matter.
  std::vector<float> faster(irregular);
  for (auto& x : faster) x *= 0.5f;
  const auto scaled = within_context(faster);
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_NEAR(scaled[i], busy[i], 1e-4) << i;
  // The first beat's interval before and the last one's after are unknown: 0.
  EXPECT_FLOAT_EQ(quiet[0 * k + 0], 0.0f);
  EXPECT_FLOAT_EQ(quiet[99 * k + 1], 0.0f);
  // Fewer than 8 intervals around a beat: 0.
  EXPECT_EQ(within_context(std::vector<float>(8, 0.8f)), std::vector<float>(8 * k, 0.0f));
  EXPECT_TRUE(within_context({}).empty());
}

// Bigeminy and trigeminy repeat, atrial fibrillation does not: the change between successive
// intervals is as large in both, each interval's closest match among the three before it is
// not.
TEST(RrPatternChanges, BigeminyAndTrigeminyRepeatAnIrregularRhythmDoesNot) {
  auto median_from_beat_4 = [](std::vector<float> v) {
    v.erase(v.begin(), v.begin() + 4);
    std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  auto pattern = [](const std::vector<float>& rr) {
    return hlm::rr_pattern_changes(rr.data(), rr.size());
  };
  std::vector<float> bigeminy(80), trigeminy(81), irregular(80);
  for (size_t i = 0; i < bigeminy.size(); ++i) bigeminy[i] = i % 2 ? 0.45f : 1.05f;
  for (size_t i = 0; i < trigeminy.size(); ++i)
    trigeminy[i] = i % 3 == 0 ? 0.75f : (i % 3 == 1 ? 0.45f : 1.05f);
  uint64_t state = 12345;
  for (auto& x : irregular) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = 0.5f + 0.6f * float(state >> 40) / float(1ULL << 24);
  }
  const auto two = pattern(bigeminy), three = pattern(trigeminy), random = pattern(irregular);
  // An exact repeat reads as the resolution floor, as one within a sample of a 128 Hz record.
  EXPECT_FLOAT_EQ(median_from_beat_4(two), float(hlm::kRrPatternResolution));
  EXPECT_FLOAT_EQ(median_from_beat_4(three), float(hlm::kRrPatternResolution));
  // A random rhythm of intervals 0.5-1.1 s: its closest of three is still a change of several
  // per cent at most beats.
  EXPECT_GT(median_from_beat_4(random), 0.03f);
  // Against successive changes alone, bigeminy would read as the more irregular of the two.
  EXPECT_NEAR(std::fabs(std::log(bigeminy[5] / bigeminy[4])), std::log(1.05 / 0.45), 1e-5);
  // The record's first two beats: 0; bounded; the heart rate does not matter.
  EXPECT_FLOAT_EQ(random[0], 0.0f);
  EXPECT_FLOAT_EQ(random[1], 0.0f);
  for (size_t i = 2; i < random.size(); ++i) {
    EXPECT_LE(random[i], 2.0f);
    EXPECT_GE(random[i], float(hlm::kRrPatternResolution));
  }
  std::vector<float> faster(irregular);
  for (auto& x : faster) x *= 0.5f;
  const auto scaled = pattern(faster);
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_NEAR(scaled[i], random[i], 1e-5) << i;
  EXPECT_TRUE(pattern({}).empty());
}
