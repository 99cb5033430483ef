// The WFDB reader on the three MIT-BIH records shipped in workflows/data/mitdb, so a fresh
// clone without ../shared still proves it. Expected values are those of the WFDB package's
// own tools (wfdbdesc, rdsamp, sumann) on the same files.
#include <gtest/gtest.h>

#include <array>
#include <map>

#include "hlm/wfdb.h"

namespace {

const std::string kShipped = HLM_SOURCE_DIR "/workflows/data/mitdb";

struct Expected {
  const char* name;
  int64_t first_annotation, last_annotation;
  std::array<int, 2> initial_values;
  std::array<int, 2> checksums;
  std::map<uint8_t, int> beats;  // MIT code -> count (N=1, V=5, F=6, A=8, S=9, Q=13)
};

const Expected kRecords[] = {
    {"119", 32, 649788, {825, 930}, {2943, -26388}, {{1, 1543}, {5, 444}}},
    {"208",
     9,
     649935,
     {1003, 1062},
     {8074, 20649},
     {{1, 1586}, {5, 992}, {6, 373}, {9, 2}, {13, 2}}},
    {"209", 84, 649857, {1020, 1056}, {-27806, -31706}, {{1, 2621}, {8, 383}, {5, 1}}},
};

TEST(WfdbShipped, HeadersSignalsAndAnnotationsMatchTheWfdbTools) {
  for (const Expected& want : kRecords) {
    SCOPED_TRACE(want.name);
    const hlm::Record r = hlm::wfdb::read_record(kShipped, want.name);
    EXPECT_EQ(r.sampling_hz, 360.0);
    EXPECT_EQ(r.frames, 650000);
    ASSERT_EQ(r.signals.size(), 2u);
    EXPECT_EQ(r.signals[0].description, "MLII");
    EXPECT_EQ(r.signals[1].description, "V1");
    for (int s = 0; s < 2; ++s) {
      EXPECT_EQ(r.signals[s].format, 212);
      EXPECT_EQ(r.signals[s].adc_zero, 1024);
      EXPECT_EQ(r.signals[s].checksum, want.checksums[s]);  // the reader verifies it
      ASSERT_EQ(r.digital[s].size(), 650000u);
      EXPECT_EQ(r.digital[s][0], want.initial_values[s]);
    }
    std::map<uint8_t, int> beats;
    for (const auto& a : r.annotations)
      if (hlm::is_beat_code(a.code)) beats[a.code] += 1;
    EXPECT_EQ(beats, want.beats);
    ASSERT_FALSE(r.annotations.empty());
    EXPECT_EQ(r.annotations.front().sample, want.first_annotation);
    EXPECT_EQ(r.annotations.back().sample, want.last_annotation);
  }
}

// rdsamp -r mitdb/208 -t s10 (first samples): the 12-bit pairs of format 212 unpacked.
TEST(WfdbShipped, Record208StartsWithRdsampsSamples) {
  const hlm::Record r = hlm::wfdb::read_record(kShipped, "208");
  const std::array<int, 10> lead0 = {1003, 1003, 1003, 1003, 1003, 1003, 1003, 1003, 999, 995};
  const std::array<int, 10> lead1 = {1062, 1062, 1062, 1062, 1062, 1062, 1062, 1062, 1062, 1068};
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(r.digital[0][i], lead0[i]) << i;
    EXPECT_EQ(r.digital[1][i], lead1[i]) << i;
  }
}

}  // namespace
