// A record's statistics, a beat's tree inputs and the boosted trees that read them: each
// statistic summarises its own record's beats in the documented column, a beat reads its own
// inputs and its code's centroid, the trees learn a rule, stop early when the validation
// records say so, and refuse a file or a shape they were not fit for.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "hlm/dsp/kmeans.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "hlm/tokenizer.h"
#include "support/rr_token_store.h"
#include "tasks/beat_features.h"
#include "tasks/beat_tree_inputs.h"
#include "tasks/boosted_trees.h"
#include "tasks/record_statistics.h"

namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& stem) {
  return (fs::temp_directory_path() / (stem + "_" + std::to_string(::getpid()))).string();
}

// Two records: a regular one with one premature beat and its pause, an irregular one.
hlm::test::RrTokenStore two_record_store() {
  std::vector<std::vector<float>> rr{{0.0f}, {0.0f}};
  for (size_t i = 1; i < 50; ++i) rr[0].push_back(i == 20 ? 0.5f : i == 21 ? 1.1f : 0.8f);
  for (size_t i = 1; i < 31; ++i) rr[1].push_back(0.4f + 0.15f * float(i % 5));
  return hlm::test::RrTokenStore("hlm_record_statistics", std::move(rr));
}

size_t column_of(const hlm::RecordStatistics& s, const std::string& name) {
  const auto it = std::find(s.names.begin(), s.names.end(), name);
  EXPECT_NE(it, s.names.end()) << name;
  return size_t(it - s.names.begin());
}

// Rows whose class is set by column 1 alone (three bands), column 0 noise.
hlm::TreeData banded(size_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 3.0f);
  hlm::TreeData d;
  d.columns = 2;
  for (size_t i = 0; i < rows; ++i) {
    const float noise = u(rng), x = u(rng);
    d.rows.insert(d.rows.end(), {noise, x});
    d.labels.push_back(std::min(2, int(x)));
  }
  return d;
}

}  // namespace

TEST(RecordStatistics, EachRowSummarisesItsOwnRecordsBeatsInTheNamedColumns) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions options;
  options.rr_features = true;
  // Rows follow the order asked for, not the store's.
  const auto s = hlm::record_statistics(store, {1, 0}, options);
  ASSERT_EQ(s.columns(), size_t(hlm::kRrFeatureCount * 9 + 4 + 2));
  EXPECT_EQ(hlm::record_statistics_names(options), s.names);
  ASSERT_EQ(s.values.size(), 2 * s.columns());
  for (size_t row = 0; row < 2; ++row) {
    const size_t r = 1 - row;
    const auto& rr = file.rr[r];
    const auto features = hlm::rr_features(rr.data(), rr.size());
    // "RR before" over the beats after the first: its extremes and mean.
    float lowest = 1e9f, highest = -1e9f;
    double sum = 0.0;
    for (size_t b = 1; b < rr.size(); ++b) {
      const float v = features[b * hlm::kRrFeatureCount];
      lowest = std::min(lowest, v), highest = std::max(highest, v), sum += v;
    }
    const float* values = s.values.data() + row * s.columns();
    const std::string before = hlm::kRrFeatureNames[0];
    EXPECT_FLOAT_EQ(values[column_of(s, before + " min")], lowest) << "record " << r;
    EXPECT_FLOAT_EQ(values[column_of(s, before + " max")], highest) << "record " << r;
    EXPECT_NEAR(values[column_of(s, before + " mean")], sum / double(rr.size() - 1), 1e-6);
    EXPECT_FLOAT_EQ(values[column_of(s, "log(beats)")], std::log(float(rr.size())));
  }
  // Record 0 changes rhythm around its premature beat only: its median change is 0, its mean
  // is not.
  const float* r0 = s.values.data() + s.columns();
  EXPECT_FLOAT_EQ(r0[column_of(s, "|log(RR / RR before)| p50")], 0.0f);
  EXPECT_GT(r0[column_of(s, "|log(RR / RR before)| mean")], 0.01f);
  const float* r1 = s.values.data();
  EXPECT_GT(r1[column_of(s, "|log(RR / RR before)| p50")], 0.1f);

  // With the rhythm against the record: its columns follow, record 0's typical beat sits at
  // its median (log 1 = 0), and its spread is that of its own values.
  options.record_rhythm_features = true;
  const auto both = hlm::record_statistics(store, {0}, options);
  ASSERT_EQ(both.columns(),
            size_t((hlm::kRrFeatureCount + hlm::kRecordRhythmFeatureCount) * 9 + 6));
  const std::string against = hlm::kRecordRhythmFeatureNames[0];
  EXPECT_FLOAT_EQ(both.values[column_of(both, against + " p50")], 0.0f);
  const auto rhythm = hlm::record_rhythm_features(file.rr[0].data(), file.rr[0].size());
  double sum = 0.0, sum_sq = 0.0;
  const size_t n = file.rr[0].size() - 1;
  for (size_t b = 1; b <= n; ++b) {
    const double v = rhythm[b * hlm::kRecordRhythmFeatureCount];
    sum += v, sum_sq += v * v;
  }
  EXPECT_NEAR(both.values[column_of(both, against + " sd")],
              std::sqrt(sum_sq / double(n) - (sum / double(n)) * (sum / double(n))), 1e-5);

  hlm::HeadOptions none;
  EXPECT_THROW(hlm::record_statistics(store, {0}, none), hlm::ConfigError);
}

// A stretch of a record (task af's segments) is summarised as a record is, over its own beats:
// the whole record gives the record's row; a stretch from beat 10 keeps its first beat (its
// interval before is known) and sees the premature beat at 20 only when it holds it.
TEST(RecordStatistics, SpansSummariseTheirOwnStretchOfBeats) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions options;
  options.rr_features = true;
  options.rr_pattern_features = true;
  const uint64_t beats = file.rr[0].size();
  const auto whole = hlm::record_statistics(store, {0}, options);
  const auto spans =
      hlm::span_statistics(store, {{0, 0, beats}, {0, 10, 20}, {0, 25, 20}}, options);
  ASSERT_EQ(spans.names, whole.names);
  ASSERT_EQ(spans.values.size(), 3 * whole.columns());
  for (size_t j = 0; j < whole.columns(); ++j)
    EXPECT_FLOAT_EQ(spans.values[j], whole.values[j]) << whole.names[j];
  const auto features = hlm::rr_features(file.rr[0].data(), file.rr[0].size());
  const std::string before = hlm::kRrFeatureNames[0];
  const size_t columns = whole.columns();
  const float* holding = spans.values.data() + columns;  // beats 10 .. 29
  float lowest = 1e9f;
  for (size_t b = 10; b < 30; ++b) lowest = std::min(lowest, features[b * hlm::kRrFeatureCount]);
  EXPECT_FLOAT_EQ(holding[column_of(spans, before + " min")], lowest);
  EXPECT_FLOAT_EQ(holding[column_of(spans, "log(beats)")], std::log(20.0f));
  EXPECT_GT(holding[column_of(spans, "|log(RR / RR before)| mean")], 0.01f);
  const float* after = spans.values.data() + 2 * columns;  // beats 25 .. 44: regular
  EXPECT_FLOAT_EQ(after[column_of(spans, "|log(RR / RR before)| mean")], 0.0f);
  EXPECT_THROW(hlm::span_statistics(store, {{0, 40, 20}}, options), hlm::InternalError);
}

// rr_pattern_features: five more columns after the RR ones. Record 1 repeats a pattern of five
// intervals, which its three intervals before never match; record 0 is regular but for one
// premature beat, so its median smallest change is the resolution floor.
TEST(RecordStatistics, ThePatternColumnsSayWhetherTheRhythmRepeats) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions options;
  options.rr_features = true;
  const auto without = hlm::record_statistics(store, {0, 1}, options);
  options.rr_pattern_features = true;
  const auto s = hlm::record_statistics(store, {0, 1}, options);
  ASSERT_EQ(s.columns(), without.columns() + 5);
  const std::string smallest = "smallest |log(RR / RR k before)|, k <= 3, ";
  const size_t p50 = column_of(s, smallest + "p50"), mean = column_of(s, smallest + "mean");
  EXPECT_FLOAT_EQ(s.values[p50], float(hlm::kRrPatternResolution));
  EXPECT_GT(s.values[mean], float(hlm::kRrPatternResolution));
  // 0.4 .. 1.0 s in steps of 0.15, repeating every 5: the closest of three is at least
  // log(0.85 / 1.0) away.
  EXPECT_GT(s.values[s.columns() + p50], 0.15f);
  // The columns before are those without the key.
  for (size_t j = 0; j < without.columns(); ++j)
    EXPECT_FLOAT_EQ(s.values[j], without.values[j]) << without.names[j];
}

// trees_descriptors on task record: the chosen store descriptors come last, each as its median
// over the record's beats, and leave the nine summaries of the head's descriptors; a store that
// lacks a chosen column is refused, naming it.
TEST(RecordStatistics, ChosenStoreDescriptorsAreTheRecordsMediansInsteadOfNineSummaries) {
  using hlm::test::RrTokenStore;
  std::vector<std::vector<float>> rr{{0.0f}, {0.0f}};
  for (size_t i = 1; i < 50; ++i) rr[0].push_back(0.8f);
  for (size_t i = 1; i < 31; ++i) rr[1].push_back(0.6f);
  const RrTokenStore file("hlm_record_statistics_medians", std::move(rr), 3);
  const auto store = hlm::TokenStore::open(file.path);
  const auto waveform = hlm::select_store_descriptors({"a 0", "w 1", "w 2"}, "w", "key");
  hlm::HeadOptions options;
  options.rr_features = true;
  const auto s = hlm::record_statistics(store, {1, 0}, options, waveform);
  const size_t rr_columns = hlm::kRrFeatureCount * 9 + 4 + 2;
  ASSERT_EQ(s.columns(), rr_columns + 2);
  EXPECT_EQ(s.names[rr_columns], "w 1 record median");
  EXPECT_EQ(s.names[rr_columns + 1], "w 2 record median");
  // A segment's (task af) are named for it, and read its own beats: 10-29 of record 1.
  const auto segment = hlm::span_statistics(store, {{1, 10, 20}}, options, waveform);
  EXPECT_EQ(segment.names[rr_columns], "w 1 segment median");
  EXPECT_FLOAT_EQ(segment.values[rr_columns], 0.5f * (RrTokenStore::descriptor_value(1, 19, 1) +
                                                      RrTokenStore::descriptor_value(1, 20, 1)));
  // Beat i of record r holds r * 1000 + i + 0.25 j: the medians of beats 0-30 and 0-49.
  EXPECT_FLOAT_EQ(s.values[rr_columns], RrTokenStore::descriptor_value(1, 15, 1));
  EXPECT_FLOAT_EQ(
      s.values[s.columns() + rr_columns + 1],
      0.5f * (RrTokenStore::descriptor_value(0, 24, 2) + RrTokenStore::descriptor_value(0, 25, 2)));

  // The head reads all three descriptors; the trees summarise only the one not chosen.
  options.descriptors = true;
  options.descriptor_mean = {0.0f, 0.0f, 0.0f};
  options.descriptor_scale = {1.0f, 1.0f, 1.0f};
  const auto with_head = hlm::record_statistics(store, {0}, options, waveform);
  EXPECT_EQ(with_head.columns(), rr_columns + 9 + 2);
  EXPECT_EQ(hlm::record_statistics_names(options, waveform), with_head.names);
  EXPECT_FLOAT_EQ(with_head.values[column_of(with_head, "descriptor 0 max")],
                  RrTokenStore::descriptor_value(0, 49, 0));
  EXPECT_EQ(std::count_if(with_head.names.begin(), with_head.names.end(),
                          [](const std::string& n) { return n.rfind("descriptor 1", 0) == 0; }),
            0);
  // With the tokenize manifest's names (finetune sets them before the scaling is fitted), the
  // columns carry them: trees_leave_out can name them.
  options.descriptor_names = {"a 0", "w 1", "w 2"};
  const auto named = hlm::record_statistics(store, {0}, options, waveform);
  EXPECT_EQ(named.names[column_of(with_head, "descriptor 0 max")], "a 0 max");
  options.descriptor_mean.clear();
  options.descriptor_scale.clear();
  EXPECT_EQ(hlm::record_statistics_names(options, waveform), named.names);
  // Medians alone are enough to summarise; a column the store lacks is refused.
  const auto alone = hlm::record_statistics(store, {0}, hlm::HeadOptions(), waveform);
  EXPECT_EQ(alone.columns(), 2u);
  hlm::StoreDescriptorColumns beyond{{5}, {"w 5"}};
  try {
    (void)hlm::record_statistics(store, {0}, hlm::HeadOptions(), beyond);
    ADD_FAILURE() << "a column beyond the store's descriptors was read";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(file.path), std::string::npos) << e.what();
  }
}

TEST(BoostedTrees, LearnARuleAndGiveTheSameProbabilitiesFromTheirFile) {
  hlm::TreeOptions options;
  options.rounds = 60;
  options.eta = 0.3;
  const auto trees = hlm::BoostedTrees::fit(banded(600, 1), 3, options);
  EXPECT_EQ(trees.rounds(), 60);
  const hlm::TreeData test = banded(300, 2);
  const auto probs = trees.predict(test.rows, 2);
  ASSERT_EQ(probs.size(), test.size() * 3);
  size_t right = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    const float* p = probs.data() + i * 3;
    EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-5f);
    right += size_t(std::max_element(p, p + 3) - p) == size_t(test.labels[i]);
  }
  EXPECT_GT(double(right) / double(test.size()), 0.95);

  const std::string path = temp_path("hlm_trees") + ".json";
  trees.save(path);
  const auto loaded = hlm::BoostedTrees::load(path, 3, 2);
  EXPECT_EQ(loaded.predict(test.rows, 2), probs);
  fs::remove(path);
}

TEST(BoostedTrees, StopEarlyWhenTheValidationRecordsGainNothing) {
  hlm::TreeOptions options;
  options.rounds = 40;
  options.eta = 0.3;
  // Validation labels that no rule predicts: every round after the first few fits the
  // training rows' noise only.
  hlm::TreeData validation = banded(300, 3);
  std::mt19937_64 rng(4);
  for (int& label : validation.labels) label = int(rng() % 3);
  const auto trees = hlm::BoostedTrees::fit(banded(300, 1), 3, options, validation);
  EXPECT_LT(trees.rounds(), 40);
  EXPECT_GE(trees.rounds(), 1);
}

TEST(BoostedTrees, RefuseBadLabelsAFileThatIsNotTreesOrAnotherShape) {
  hlm::TreeData bad = banded(20, 1);
  bad.labels[3] = 3;
  EXPECT_THROW(hlm::BoostedTrees::fit(bad, 3, {}), hlm::DataError);

  hlm::TreeOptions options;
  options.rounds = 5;
  const auto trees = hlm::BoostedTrees::fit(banded(100, 1), 3, options);
  EXPECT_THROW(trees.predict(std::vector<float>(6, 0.0f), 3), hlm::DataError);
  const std::string path = temp_path("hlm_trees_bad") + ".json";
  trees.save(path);
  for (const auto& [classes, columns] : {std::pair{3, size_t(5)}, std::pair{4, size_t(2)}}) {
    try {
      hlm::BoostedTrees::load(path, classes, columns);
      ADD_FAILURE() << "trees of 3 classes over 2 columns loaded as " << classes << " over "
                    << columns;
    } catch (const hlm::DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  std::ofstream(path) << "{\"not\": \"a model\"";
  try {
    hlm::BoostedTrees::load(path, 3, 2);
    ADD_FAILURE() << "a truncated file loaded";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  fs::remove(path);
  EXPECT_THROW(hlm::BoostedTrees::load(path, 3, 2), hlm::DataError);
}

// trees_leave_out: every column whose name begins with a prefix goes, the others keep their
// order and values; a prefix that names no column is refused rather than ignored.
TEST(BoostedTrees, LeavingOutColumnsByNamePrefix) {
  hlm::TreeRows rows;
  rows.names = {"log(local RR / 1 s) mean", "RR sd", "log(local RR / 1 s) max", "beats"};
  rows.values = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto kept = hlm::without_columns(rows, {"log(local RR / 1 s)"});
  EXPECT_EQ(kept.names, (std::vector<std::string>{"RR sd", "beats"}));
  EXPECT_EQ(kept.values, (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(hlm::without_columns(rows, {}).values, rows.values);
  EXPECT_THROW(hlm::without_columns(rows, {"RR sd", "local RR"}), hlm::ConfigError);
}

TEST(BoostedTrees, TheBlendWeightFavoursThePartThatKnowsTheClasses) {
  // Four items of two classes: one part gives the right class 0.9, the other a coin toss.
  const std::vector<int> labels = {0, 1, 1, 0};
  const std::vector<float> knows = {0.9f, 0.1f, 0.1f, 0.9f, 0.1f, 0.9f, 0.9f, 0.1f};
  const std::vector<float> guesses(8, 0.5f);
  EXPECT_DOUBLE_EQ(hlm::fit_blend_weight(guesses, knows, labels, 2), 1.0);
  EXPECT_DOUBLE_EQ(hlm::fit_blend_weight(knows, guesses, labels, 2), 0.0);
  // Each part sure and right on half the items, sure and wrong on the other half: only an
  // even mix avoids a confident miss.
  const std::vector<float> first = {0.99f, 0.01f, 0.01f, 0.99f, 0.99f, 0.01f, 0.01f, 0.99f};
  const std::vector<float> second = {0.01f, 0.99f, 0.99f, 0.01f, 0.01f, 0.99f, 0.99f, 0.01f};
  EXPECT_DOUBLE_EQ(hlm::fit_blend_weight(first, second, labels, 2), 0.5);
}

TEST(BeatTreeRows, EachBeatReadsItsHeadInputsAndItsCodesCentroid) {
  const auto file = two_record_store();
  const auto store = hlm::TokenStore::open(file.path);
  // Five codes of two values: tokens 4-8 are codes 0-4; the store's tokens 9 and 10 are no
  // code of this codebook, so their centroid is missing.
  hlm::dsp::Codebook codebook;
  codebook.dim = 2;
  for (int c = 0; c < 5; ++c)
    codebook.centroids.insert(codebook.centroids.end(), {float(c), -1.0f});
  const std::string codebook_path = temp_path("hlm_beat_tree_codebook") + ".bin";
  hlm::dsp::save_codebook(codebook, codebook_path, "test");
  hlm::HeadOptions options;
  options.rr_features = true;
  const std::vector<uint64_t> beats = {60, 3, 5, 6};  // a beat of record 1 first
  const auto rows = hlm::BeatTreeInputs(store, options, codebook_path).rows(beats);
  // The names follow from the options and the codebook alone, before any row is made.
  EXPECT_EQ(hlm::BeatTreeInputs::column_names(options, codebook_path, {}), rows.names);
  ASSERT_EQ(rows.columns(), size_t(hlm::kRrFeatureCount + 2));
  const auto inputs = hlm::BeatFeatures(options, "").of(store);
  for (size_t i = 0; i < beats.size(); ++i) {
    const float* row = rows.values.data() + i * rows.columns();
    for (int j = 0; j < hlm::kRrFeatureCount; ++j)
      EXPECT_EQ(row[j], inputs[beats[i] * hlm::kRrFeatureCount + size_t(j)]) << "beat " << beats[i];
    int64_t token = 0;
    store.copy_window(beats[i], 1, &token);
    const float* centroid = row + hlm::kRrFeatureCount;
    const int64_t code = token - int64_t(hlm::kFirstContentToken);
    ASSERT_GE(code, 0);
    if (code < 5) {
      EXPECT_EQ(centroid[0], float(code)) << "beat " << beats[i];
      EXPECT_EQ(centroid[1], -1.0f);
    } else {
      EXPECT_TRUE(std::isnan(centroid[0]) && std::isnan(centroid[1])) << "beat " << beats[i];
    }
  }
  // Without inputs or codebook there is nothing to read.
  EXPECT_THROW(hlm::BeatTreeInputs(store, hlm::HeadOptions(), ""), hlm::ConfigError);
  fs::remove(codebook_path);
}

TEST(BeatTreeRows, TheStoresDescriptorsAreReadAsTheyAreWhenAskedFor) {
  const hlm::test::RrTokenStore file("hlm_beat_tree_descriptors", {{0.0f, 0.8f, 0.7f, 0.9f}}, 3);
  const auto store = hlm::TokenStore::open(file.path);
  hlm::HeadOptions options;
  options.rr_features = true;
  const std::vector<uint64_t> beats = {2, 0};
  const auto all = hlm::select_store_descriptors({"a 0", "b 1", "a 2"}, "", "key");
  const auto rows = hlm::BeatTreeInputs(store, options, "", all).rows(beats);
  ASSERT_EQ(rows.columns(), size_t(hlm::kRrFeatureCount + 3));
  EXPECT_EQ(rows.names.back(), "a 2");
  for (size_t i = 0; i < beats.size(); ++i)
    for (uint32_t j = 0; j < 3; ++j)
      EXPECT_EQ(rows.values[i * rows.columns() + hlm::kRrFeatureCount + j],
                hlm::test::RrTokenStore::descriptor_value(0, beats[i], j))
          << "beat " << beats[i] << " descriptor " << j;
  // A prefix: only the columns whose names begin with it, in the store's order.
  const auto chosen = hlm::select_store_descriptors({"a 0", "b 1", "a 2"}, "a ", "key");
  ASSERT_EQ(chosen.columns, (std::vector<size_t>{0, 2}));
  const auto some = hlm::BeatTreeInputs(store, options, "", chosen).rows(beats);
  ASSERT_EQ(some.columns(), size_t(hlm::kRrFeatureCount + 2));
  EXPECT_EQ(some.names[hlm::kRrFeatureCount], "a 0");
  for (size_t i = 0; i < beats.size(); ++i)
    EXPECT_EQ(some.values[i * some.columns() + hlm::kRrFeatureCount + 1],
              hlm::test::RrTokenStore::descriptor_value(0, beats[i], 2))
        << "beat " << beats[i];
  // A prefix that selects nothing is refused, naming the key.
  try {
    hlm::select_store_descriptors({"a 0", "b 1"}, "c", "trees_descriptor_prefix");
    ADD_FAILURE() << "a prefix that selects nothing was accepted";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("trees_descriptor_prefix='c'"), std::string::npos)
        << e.what();
  }
  // Not asked for: the head's inputs alone.
  EXPECT_EQ(hlm::BeatTreeInputs(store, options, "").rows(beats).columns(),
            size_t(hlm::kRrFeatureCount));
  // Asked for from a store without descriptors: the error names the store.
  const auto bare = two_record_store();
  const auto without = hlm::TokenStore::open(bare.path);
  try {
    hlm::BeatTreeInputs(without, options, "", all);
    ADD_FAILURE() << "a store without descriptors gave the trees descriptors";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(bare.path), std::string::npos) << e.what();
  }
}
