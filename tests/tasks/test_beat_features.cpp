// The head inputs of a beat classifier: each group of features sits in its own columns, in
// the documented order, record by record, whichever groups are on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "support/rr_token_store.h"
#include "tasks/beat_features.h"

namespace {

// Two records of different rhythms (one regular with a tachycardia run, one irregular), so a
// feature computed over the wrong record or put in the wrong columns shows.
hlm::test::RrTokenStore two_record_store() {
  std::vector<std::vector<float>> rr(2);
  for (size_t i = 0; i < 60; ++i) rr[0].push_back(i == 0 ? 0.0f : i >= 30 && i < 40 ? 0.4f : 0.8f);
  for (size_t i = 0; i < 45; ++i) rr[1].push_back(i == 0 ? 0.0f : 0.5f + 0.1f * float(i % 4));
  return hlm::test::RrTokenStore("hlm_beat_features", std::move(rr));
}

// Columns [column, column + width) of `all` (k per beat) against `expected` (width per beat).
void expect_columns(const std::vector<float>& all, size_t k, size_t column, size_t width,
                    const std::vector<float>& expected, size_t first_beat) {
  for (size_t beat = 0; beat < expected.size() / width; ++beat)
    for (size_t j = 0; j < width; ++j)
      ASSERT_EQ(all[(first_beat + beat) * k + column + j], expected[beat * width + j])
          << "beat " << first_beat + beat << " column " << column + j;
}

}  // namespace

TEST(BeatFeatures, EachGroupSitsInItsColumnsRecordByRecord) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions both;
  both.rr_features = true;
  both.record_rhythm_features = true;
  hlm::HeadOptions rhythm_only;
  rhythm_only.record_rhythm_features = true;
  const hlm::BeatFeatures with_both(both, ""), with_rhythm(rhythm_only, "");
  ASSERT_EQ(with_both.count(), hlm::kRrFeatureCount + hlm::kRecordRhythmFeatureCount);
  ASSERT_EQ(with_rhythm.count(), hlm::kRecordRhythmFeatureCount);
  const auto all = with_both.of(store);
  const auto alone = with_rhythm.of(store);
  ASSERT_EQ(all.size(), store.token_count() * size_t(with_both.count()));
  size_t first = 0;
  for (const auto& rr : file.rr) {
    const auto local = hlm::rr_features(rr.data(), rr.size());
    const auto record = hlm::record_rhythm_features(rr.data(), rr.size());
    expect_columns(all, 6, 0, 3, local, first);
    expect_columns(all, 6, 3, 3, record, first);
    expect_columns(alone, 3, 0, 3, record, first);
    first += rr.size();
  }
  EXPECT_TRUE(hlm::BeatFeatures(hlm::HeadOptions{}, "").of(store).empty());
}

// The record's extremes a segment head reads: per record, the smallest then the largest value
// of each rhythm feature over its beats, on every beat of that record (record 0's most
// premature beats are its tachycardia run, beats 30-39; record 1 has no run).
TEST(BeatFeatures, RecordRhythmExtremesAreEachRecordsMinimaAndMaxima) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  EXPECT_TRUE(hlm::store_record_rhythm_extremes(store, false).empty());
  const auto all = hlm::store_record_rhythm_extremes(store, true);
  constexpr size_t k = hlm::kRecordRhythmFeatureCount;
  ASSERT_EQ(all.size(), store.token_count() * 2 * k);
  size_t first = 0;
  for (size_t r = 0; r < 2; ++r) {
    const auto rhythm = hlm::record_rhythm_features(file.rr[r].data(), file.rr[r].size());
    std::vector<float> expected(2 * k);
    for (size_t j = 0; j < k; ++j) {
      float lowest = rhythm[j], highest = rhythm[j];
      for (size_t b = 0; b < file.rr[r].size(); ++b) {
        lowest = std::min(lowest, rhythm[b * k + j]);
        highest = std::max(highest, rhythm[b * k + j]);
      }
      expected[j] = lowest;
      expected[k + j] = highest;
    }
    EXPECT_LT(expected[0], expected[k]) << "record " << r;  // its RR before does vary
    for (size_t b = 0; b < file.rr[r].size(); ++b)
      for (size_t j = 0; j < 2 * k; ++j)
        ASSERT_EQ(all[(first + b) * 2 * k + j], expected[j]) << "record " << r << " beat " << b;
    first += file.rr[r].size();
  }
}

// descriptor_prefix's columns: the head standardises and reads only the store's descriptors it
// chose, in its order, and a store without one of them is refused naming its file.
TEST(BeatFeatures, AHeadReadsOnlyTheDescriptorColumnsItChose) {
  const hlm::test::RrTokenStore file("hlm_beat_descriptor_columns", {{0.0f, 0.8f, 0.7f, 0.9f}}, 3);
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions head;
  head.descriptors = true;
  head.descriptor_columns = {2, 0};
  hlm::fit_descriptor_scaling(head, store, {0}, /*tail=*/0.0);
  ASSERT_EQ(hlm::descriptor_inputs(head), 2);
  // Beats 0-3 of record 0: beat + 0.25 j, so each column's mean tells which column it is.
  EXPECT_FLOAT_EQ(head.descriptor_mean[0], 1.5f + 0.5f);
  EXPECT_FLOAT_EQ(head.descriptor_mean[1], 1.5f);
  const auto values = hlm::store_descriptors(store, head);
  ASSERT_EQ(values.size(), store.token_count() * 2);
  for (uint64_t beat = 0; beat < store.token_count(); ++beat)
    for (size_t j = 0; j < 2; ++j) {
      const uint32_t column = j == 0 ? 2 : 0;
      EXPECT_FLOAT_EQ(
          values[beat * 2 + j],
          (hlm::test::RrTokenStore::descriptor_value(0, beat, column) - head.descriptor_mean[j]) /
              head.descriptor_scale[j])
          << "beat " << beat << " input " << j;
    }
  const hlm::test::RrTokenStore narrow("hlm_beat_descriptor_narrow", {{0.0f, 0.8f}}, 2);
  try {
    hlm::store_descriptors(hlm::TokenStore::open(narrow.path), head);
    ADD_FAILURE() << "a store without the chosen column 2 was read";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(narrow.path), std::string::npos) << e.what();
  }
}
