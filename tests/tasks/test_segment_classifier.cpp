// Segments of a record and the irregularity statistics the segment head reads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "tasks/head_options.h"
#include "tasks/score_items.h"
#include "tasks/segment_classifier.h"

namespace {

namespace fs = std::filesystem;

// A store holding records of the given beat counts (named r0, r1, ...), removed at the end of
// the test.
struct RecordsStore {
  std::string path;
  explicit RecordsStore(const std::vector<size_t>& beats_per_record) {
    path = (fs::temp_directory_path() / ("hlm_segments_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(beats_per_record.front()) + "_" +
                                         std::to_string(beats_per_record.size()) + ".hlmt"))
               .string();
    hlm::TokenStoreWriter writer(path, 16, "test-tokenizer");
    for (size_t r = 0; r < beats_per_record.size(); ++r) {
      hlm::Beats b;
      b.record = "r" + std::to_string(r);
      b.sampling_hz = 250;
      for (size_t i = 0; i < beats_per_record[r]; ++i) {
        b.positions.push_back(int64_t(i) * 200);
        b.rr_seconds.push_back(i == 0 ? 0.0f : 0.8f);
        b.tokens.push_back(uint32_t(i % 7));
      }
      writer.append(b);
    }
    writer.finish();
  }
  ~RecordsStore() { fs::remove(path); }
};
struct OneRecordStore : RecordsStore {
  explicit OneRecordStore(size_t beats) : RecordsStore({beats}) {}
};

std::vector<std::pair<int64_t, int64_t>> spans(const std::vector<hlm::Segment>& segments) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& s : segments) out.emplace_back(int64_t(s.start), s.length);
  return out;
}

TEST(Segments, ATailShorterThanASegmentIsLeftOutUnlessCovered) {
  const OneRecordStore file(37);
  const auto store = hlm::TokenStore::open(file.path);
  const auto label = [](size_t, uint64_t, int64_t) { return 0; };
  using Spans = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(spans(hlm::make_segments(store, {0}, 24, 24, 8, label)), (Spans{{0, 24}}));
  // The last segment ends at beat 37, overlapping the first: every beat is in one.
  EXPECT_EQ(spans(hlm::make_segments(store, {0}, 24, 24, 8, label, true)),
            (Spans{{0, 24}, {13, 24}}));
  EXPECT_EQ(spans(hlm::make_segments(store, {0}, 12, 12, 8, label, true)),
            (Spans{{0, 12}, {12, 12}, {24, 12}, {25, 12}}));
  // A record that segments exactly gets no extra segment; a short record one of all its beats.
  EXPECT_EQ(spans(hlm::make_segments(store, {0}, 37, 37, 8, label, true)), (Spans{{0, 37}}));
  EXPECT_EQ(spans(hlm::make_segments(store, {0}, 64, 64, 8, label, true)), (Spans{{0, 37}}));
}

// Task record: a labelled record with too few beats for a segment is scored all the same (even
// probabilities), so no labelled record drops out of the scores; an unlabelled one stays out.
TEST(Segments, ARecordTooShortForASegmentIsStillScored) {
  const RecordsStore file({5, 37, 3});
  const auto store = hlm::TokenStore::open(file.path);
  const auto label = [](size_t r, uint64_t, int64_t) { return r == 2 ? -1 : int(r) + 1; };
  const auto segments = hlm::make_segments(store, {0, 1, 2}, 24, 24, 8, label, true);
  ASSERT_EQ(segments.size(), 2u);  // record 1 alone: 5 and 3 beats are under 8
  const std::vector<float> probs = {0.7f, 0.1f, 0.1f, 0.1f, 0.5f, 0.3f, 0.1f, 0.1f};
  auto items = hlm::pool_by_record(segments, probs, 4);
  ASSERT_EQ(items.size(), 1u);
  hlm::add_records_too_short(store, {0, 1, 2}, label, 4, items);
  ASSERT_EQ(items.size(), 2u);
  // Back in record order: the short record 0 comes first.
  EXPECT_EQ(items[0].record, 0u);
  EXPECT_EQ(items[0].key, 0u);
  EXPECT_EQ(items[0].truth, 1);
  EXPECT_EQ(items[0].probs, std::vector<float>(4, 0.25f));
  EXPECT_EQ(items[1].record, 1u);
  EXPECT_FLOAT_EQ(items[1].probs[0], 0.6f);
  // Records already scored are not added twice.
  hlm::add_records_too_short(store, {0, 1, 2}, label, 4, items);
  EXPECT_EQ(items.size(), 2u);
}

TEST(Segments, IrregularityQuantilesAreThoseOfTheSuccessiveRrChangesOfRealBeats) {
  // Two rows of 5 beats; row 1 has 3 beats and 2 of padding. Features per beat: log(RR before /
  // local), log(RR after / local), log(local): the change is |after - before|.
  auto rr = torch::zeros({2, 5, hlm::kRrFeatureCount});
  const float before0[] = {0.0f, 0.1f, -0.2f, 0.0f, 0.05f};
  const float after0[] = {0.4f, 0.0f, 0.1f, 0.0f, 0.25f};  // changes 0.4 0.1 0.3 0 0.2
  for (int64_t i = 0; i < 5; ++i) {
    rr[0][i][0] = before0[i];
    rr[0][i][1] = after0[i];
    rr[0][i][2] = 7.0f;  // the local RR does not enter
  }
  rr[1][0][1] = 0.5f;  // changes 0.5 0.0 0.0, then padding with changes of 9
  rr[1][3][1] = 9.0f;
  rr[1][4][0] = -9.0f;
  auto mask = torch::ones({2, 5});
  mask[1][3] = 0.0f;
  mask[1][4] = 0.0f;
  const auto q = hlm::successive_change_quantiles(rr, mask);
  ASSERT_EQ(q.sizes(), (std::vector<int64_t>{2, 3}));
  // Row 0 sorted: 0 0.1 0.2 0.3 0.4 -> quantiles at floor(q * 4): 1, 2, 3.
  const float expected[2][3] = {{0.1f, 0.2f, 0.3f}, {0.0f, 0.0f, 0.0f}};
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(q[r][k].item<float>(), std::log(expected[r][k] + 1e-3f), 1e-4f) << r << k;
}

// The input scaling a fine-tune writes round-trips through the results; a scaling that does not
// fit (sizes differ, a scale of 0) is refused, naming what to do.
TEST(Segments, TheHeadsInputScalingRoundTripsAndAMalformedOneIsRefused) {
  hlm::HeadOptions o;
  o.input_mean = {0.5f, -1.0f};
  o.input_scale = {2.0f, 0.25f};
  const auto back = hlm::HeadOptions::from_json(o.to_json());
  EXPECT_EQ(back.input_mean, o.input_mean);
  EXPECT_EQ(back.input_scale, o.input_scale);
  EXPECT_FALSE(hlm::HeadOptions().to_json().contains("input_mean"));
  for (const auto& bad : {nlohmann::json{{"input_mean", {0.5}}, {"input_scale", {1, 2}}},
                          nlohmann::json{{"input_mean", {0.5}}, {"input_scale", {0}}}}) {
    try {
      hlm::HeadOptions::from_json(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const hlm::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("re-run the finetune stage"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
