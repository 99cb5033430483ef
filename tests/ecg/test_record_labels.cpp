// Record labels: AF episodes from rhythm annotations as beat ranges, per-beat flags, the
// record's own class, and the JSON the tokenize stage writes read back (or refused by name).
#include <gtest/gtest.h>

#include "ecg/record_labels.h"
#include "hlm/errors.h"

namespace {

hlm::Annotation rhythm(int64_t sample, const std::string& aux) {
  hlm::Annotation a;
  a.sample = sample;
  a.code = 28;
  a.aux = aux;
  return a;
}

}  // namespace

TEST(RecordLabels, AfEpisodesBecomeBeatRangesAndFlags) {
  hlm::Record record;
  record.label = "A";
  record.annotations = {rhythm(0, "(N"), rhythm(1000, "(AFIB"), rhythm(3000, "(N"),
                        rhythm(4100, "(AFIB")};
  std::vector<int64_t> beats;
  for (int64_t s = 100; s < 5000; s += 250) beats.push_back(s);  // 20 beats
  const auto labels = hlm::labels_of(record, beats);
  EXPECT_EQ(labels.label, "A");
  EXPECT_TRUE(labels.rhythm_annotated);
  // Beats at 1100..2850 (indices 4..11) and from 4100 on (index 16..19) are in AF.
  ASSERT_EQ(labels.af.size(), 2u);
  EXPECT_EQ(labels.af[0], (std::pair<uint64_t, uint64_t>{4, 12}));
  EXPECT_EQ(labels.af[1], (std::pair<uint64_t, uint64_t>{16, 20}));
  const auto flags = hlm::af_flags(labels, beats.size());
  EXPECT_EQ(flags[3], 0);
  EXPECT_EQ(flags[4], 1);
  EXPECT_EQ(flags[11], 1);
  EXPECT_EQ(flags[12], 0);
  EXPECT_EQ(flags[19], 1);
}

TEST(RecordLabels, ARecordWithoutRhythmAnnotationsHasNoKnownRhythm) {
  hlm::Record record;
  hlm::Annotation beat;
  beat.code = 1;
  record.annotations = {beat};
  const auto labels = hlm::labels_of(record, {0, 300});
  EXPECT_FALSE(labels.rhythm_annotated);
  EXPECT_TRUE(labels.af.empty());
}

TEST(RecordLabels, JsonRoundTripsAndAForeignFileIsNamed) {
  std::map<std::string, hlm::RecordLabels> labels;
  labels["201"] = {"", true, {{3, 9}}};
  labels["A00001"] = {"N", false, {}};
  const auto back = hlm::labels_from_json(hlm::to_json(labels), "labels.json");
  EXPECT_EQ(back.at("201").af, labels["201"].af);
  EXPECT_EQ(back.at("A00001").label, "N");
  try {
    hlm::labels_from_json(nlohmann::json{{"records", {{"x", 1}}}}, "/run/t/record_labels.json");
    FAIL() << "accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/run/t/record_labels.json: not a record-labels file"),
              std::string::npos)
        << e.what();
  }
}
