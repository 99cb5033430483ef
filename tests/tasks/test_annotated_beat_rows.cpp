// Other patients' annotated beats as rows of the beat trees: each beat's RR columns describe its
// own rhythm within its 30-minute stretch, every other column is missing, the rows join the
// training rows at the share asked for, and bad input is refused by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "hlm/dsp/rr_features.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "tasks/annotated_beat_rows.h"

namespace {

namespace fs = std::filesystem;

constexpr uint8_t kNormal = 1, kAtrialPremature = 8;

// A folder of its own holding one annotation-only record `name` at 100 Hz: beats at `seconds`,
// coded `codes`, in MIT format (SKIP words carry intervals longer than a word holds).
struct AnnotatedFolder {
  fs::path dir;
  AnnotatedFolder(const std::string& name, const std::vector<double>& seconds,
                  const std::vector<uint8_t>& codes) {
    dir = fs::temp_directory_path() / ("hlm_annotated_" + std::to_string(::getpid()) + name);
    fs::create_directories(dir);
    std::ofstream(dir / (name + ".hea")) << name << " 0 100\n";
    std::ofstream atr(dir / (name + ".atr"), std::ios::binary);
    auto word = [&atr](uint16_t w) { atr.put(char(w & 0xFF)).put(char(w >> 8)); };
    int64_t last = 0;
    for (size_t i = 0; i < seconds.size(); ++i) {
      const int64_t sample = std::llround(seconds[i] * 100.0), delta = sample - last;
      if (delta > 1023) {  // SKIP: a 32-bit interval, high half first
        word(uint16_t(59 << 10));
        word(uint16_t(delta >> 16));
        word(uint16_t(delta & 0xFFFF));
        word(uint16_t(codes[i] << 10));
      } else {
        word(uint16_t((codes[i] << 10) | delta));
      }
      last = sample;
    }
    word(0);
  }
  ~AnnotatedFolder() { fs::remove_all(dir); }
};

// The source reading every record of `dir` (or those named) from their .atr files.
hlm::AnnotatedBeatSource source(const fs::path& dir, std::vector<std::string> records = {}) {
  return {dir.string(), std::move(records), "atr"};
}

const std::vector<std::string> kColumns = {hlm::kRrFeatureNames[0],
                                           hlm::kRecordRhythmFeatureNames[0], "code centroid 0"};

size_t column(const std::string& name) {
  return size_t(std::find(kColumns.begin(), kColumns.end(), name) - kColumns.begin());
}

TEST(AnnotatedBeatRows, AnEarlyBeatReadsEarlyAndEveryOtherColumnIsMissing) {
  std::vector<double> t{1.0};
  std::vector<uint8_t> codes{kNormal};
  for (int i = 1; i < 60; ++i) {
    t.push_back(t.back() + (i == 30 ? 0.5 : i == 31 ? 1.1 : 0.8));
    codes.push_back(i == 30 ? kAtrialPremature : kNormal);
  }
  const AnnotatedFolder folder("r1", t, codes);
  const hlm::AnnotatedBeats beats = hlm::annotated_beat_rows({source(folder.dir)}, kColumns, 0);
  ASSERT_EQ(beats.records, 1u);
  ASSERT_EQ(beats.beats, 60u);
  ASSERT_EQ(beats.data.size(), 60u);  // fewer than the per-class draw: every beat kept
  ASSERT_EQ(beats.filled.size(), 2u);
  const auto value = [&](size_t row, const std::string& name) {
    return beats.data.rows[row * kColumns.size() + column(name)];
  };
  EXPECT_EQ(beats.data.labels[30], int(hlm::BeatClass::kS));
  EXPECT_EQ(beats.data.labels[29], int(hlm::BeatClass::kN));
  EXPECT_LT(value(30, hlm::kRrFeatureNames[0]), -0.3f);  // 0.5 s against about 0.8 s
  EXPECT_NEAR(value(20, hlm::kRecordRhythmFeatureNames[0]), 0.0f, 1e-6f);  // a typical interval
  for (size_t row = 0; row < beats.data.size(); ++row)
    EXPECT_TRUE(std::isnan(value(row, "code centroid 0")));
}

TEST(AnnotatedBeatRows, EachHalfHourIsItsOwnRecord) {
  // An hour: the first half at 1 s, the second at 0.5 s. As one record, the median would make
  // one half read long and the other short.
  std::vector<double> t;
  std::vector<uint8_t> codes;
  for (double s = 0.5; s < 3600.0; s += s < 1800.0 ? 1.0 : 0.5) {
    t.push_back(s);
    codes.push_back(kNormal);
  }
  const AnnotatedFolder folder("r2", t, codes);
  const hlm::AnnotatedBeats beats = hlm::annotated_beat_rows({source(folder.dir)}, kColumns, 0);
  const size_t c = column(hlm::kRecordRhythmFeatureNames[0]);
  double largest = 0.0;
  for (size_t row = 0; row < beats.data.size(); ++row)
    largest = std::max(largest, double(std::fabs(beats.data.rows[row * 3 + c])));
  EXPECT_LT(largest, 0.05);
}

// Beats every `rr` seconds from 0.5 s on, an early one (half the interval) every `every`th,
// for about an hour: two stretches.
AnnotatedFolder rhythm(const std::string& name, double rr, int every) {
  std::vector<double> t{0.5};
  std::vector<uint8_t> codes{kNormal};
  while (t.back() < 3600.0) {
    const bool early = t.size() % size_t(every) == 0;
    t.push_back(t.back() + (early ? rr / 2 : rr));
    codes.push_back(early ? kAtrialPremature : kNormal);
  }
  return AnnotatedFolder(name, t, codes);
}

TEST(AnnotatedBeatRows, TheSameRowsOnAnyThreadsAndOncePerDraw) {
  const AnnotatedFolder first = rhythm("r4", 0.9, 7), second = rhythm("r5", 0.7, 5);
  const auto one = hlm::annotated_beat_rows({source(first.dir)}, kColumns, 3, 1);
  const auto other = hlm::annotated_beat_rows({source(second.dir)}, kColumns, 3, 1);
  const auto both =
      hlm::annotated_beat_rows({source(first.dir), source(second.dir)}, kColumns, 3, 2);
  // The first folder's rows, then the second's, whatever thread finished first.
  std::vector<float> joined = one.data.rows;
  joined.insert(joined.end(), other.data.rows.begin(), other.data.rows.end());
  ASSERT_EQ(both.data.rows.size(), joined.size());
  for (size_t i = 0; i < joined.size(); ++i)
    ASSERT_TRUE(joined[i] == both.data.rows[i] ||
                (std::isnan(joined[i]) && std::isnan(both.data.rows[i])))
        << i;
  const std::vector<hlm::AnnotatedBeatSource> sources{source(first.dir)};
  const auto shared = hlm::shared_annotated_beat_rows(sources, kColumns, 3, 2);
  EXPECT_EQ(hlm::shared_annotated_beat_rows(sources, kColumns, 3, 1), shared);  // made once
  EXPECT_NE(hlm::shared_annotated_beat_rows(sources, kColumns, 4, 2), shared);  // another draw
  EXPECT_EQ(shared->data.labels, one.data.labels);
}

TEST(AnnotatedBeatRows, JoinTheTrainingRowsAtTheirShareOfEachClass) {
  hlm::TreeData train{{1, 2, 3, 4, 5, 6}, 1, {0, 0, 0, 0, 1, 1}, {1, 1, 1, 1, 2, 2}};
  const hlm::TreeData extra{{7, 8, 9, 10}, 1, {0, 1, 1, 2}, {}};
  hlm::append_annotated_rows(train, extra, 0.25);  // extra: a third of each class's own weight
  ASSERT_EQ(train.size(), 10u);
  EXPECT_FLOAT_EQ(train.weights[6], 4.0f / 3.0f);                     // N: 4 / 3 for its one row
  EXPECT_FLOAT_EQ(train.weights[7] + train.weights[8], 4.0f / 3.0f);  // S: 4 / 3 over two
  EXPECT_FLOAT_EQ(train.weights[9], 0.0f);  // V: the training rows hold none to weigh against
  EXPECT_EQ(train.labels[9], 2);
}

TEST(AnnotatedBeatRows, RefusesWhatItCannotUse) {
  const AnnotatedFolder folder("r3", {1.0, 2.0, 3.0, 4.0}, {kNormal, kNormal, kNormal, kNormal});
  try {
    hlm::annotated_beat_rows({source(folder.dir)}, {"code centroid 0"}, 0);
    FAIL() << "no RR column accepted";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no column computed from RR"), std::string::npos);
  }
  const std::string missing = (folder.dir / "absent").string();
  try {
    hlm::annotated_beat_rows({source(missing)}, kColumns, 0);
    FAIL() << "a missing folder accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  try {
    hlm::annotated_beat_rows({source(folder.dir, {"nope"})}, kColumns, 0);
    FAIL() << "a missing record accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.hea is missing"), std::string::npos);
  }
  std::ofstream(folder.dir / "lone.hea") << "lone 0 100\n";  // a header without annotations
  try {
    hlm::expect_annotated_files({source(folder.dir, {"lone"})});
    FAIL() << "a record without its annotation file accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("lone.atr is missing"), std::string::npos);
  }
}

TEST(AnnotatedBeatRows, DrawsAboutTheCapOfEachClassFromLtafdb) {
  const fs::path dir = fs::path(HLM_TEST_DATA_DIR) / "ltafdb";
  if (!fs::exists(dir / "00.atr")) GTEST_SKIP() << "ltafdb annotations not found at " << dir;
  const hlm::AnnotatedBeats beats = hlm::annotated_beat_rows({source(dir)}, kColumns, 0);
  EXPECT_EQ(beats.records, 84u);
  EXPECT_GT(beats.beats, 8'900'000u);
  size_t s = 0, n = 0;
  for (int label : beats.data.labels) {
    s += label == int(hlm::BeatClass::kS);
    n += label == int(hlm::BeatClass::kN);
  }
  // 152,332 S and 8.7 million N beats, each drawn with the chance that leaves about 20000.
  EXPECT_NEAR(double(s), 20000.0, 600.0);
  EXPECT_NEAR(double(n), 20000.0, 600.0);
}

}  // namespace
