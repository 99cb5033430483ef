// The WFDB reader over whole PhysioNet databases in shared/data: every mitdb header and
// record, every ltafdb annotation file, Challenge 2017 .mat records, format 16 and 80 samples.
#include <gtest/gtest.h>

#include <map>

#include "hlm/wfdb.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::data_path;
using hlm::test::read_rows;
using hlm::test::read_tsv;

// Header checksum and initial value agree with the decoded samples of every signal.
void expect_checksums_and_initial_values(const hlm::Record& r) {
  ASSERT_EQ(r.digital.size(), r.signals.size());
  for (size_t s = 0; s < r.signals.size(); ++s) {
    const hlm::SignalInfo& info = r.signals[s];
    ASSERT_EQ(r.digital[s].size(), static_cast<size_t>(r.frames) * info.samples_per_frame);
    uint32_t sum = 0;
    for (int32_t v : r.digital[s]) sum += static_cast<uint32_t>(v);
    EXPECT_EQ(static_cast<int16_t>(sum & 0xFFFF), static_cast<int16_t>(info.checksum))
        << r.name << " signal " << s;
    EXPECT_EQ(r.digital[s][0], info.initial_value) << r.name << " signal " << s;
  }
}

TEST(WfdbReader, ParsesAllMitdbHeadersLikeTheReferenceTable) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const auto table = read_tsv(data_path("reference/mitdb_headers.tsv"));
  ASSERT_GT(table.size(), 1u);
  int compared = 0;
  for (size_t i = 1; i < table.size(); ++i) {
    const auto& row = table[i];
    const std::string hea = data_path("mitdb/" + row[0] + ".hea");
    if (!std::filesystem::exists(hea)) continue;  // 26 of the 48 records are shipped
    SCOPED_TRACE("record " + row[0]);
    const hlm::wfdb::Header h = hlm::wfdb::read_header(hea);
    ASSERT_EQ(h.signals.size(), static_cast<size_t>(std::stoi(row[1])));
    EXPECT_EQ(h.sampling_hz, std::stod(row[2]));
    EXPECT_EQ(h.frames, std::stoll(row[3]));
    for (size_t s = 0; s < h.signals.size(); ++s) {
      const hlm::SignalInfo& info = h.signals[s];
      const size_t c = 4 + 7 * s;
      EXPECT_EQ(info.format, std::stoi(row[c]));
      EXPECT_EQ(info.gain, std::stod(row[c + 1]));
      EXPECT_EQ(info.adc_resolution, std::stoi(row[c + 2]));
      EXPECT_EQ(info.adc_zero, std::stoi(row[c + 3]));
      EXPECT_EQ(info.initial_value, std::stoi(row[c + 4]));
      EXPECT_EQ(info.checksum, std::stoi(row[c + 5]));
      EXPECT_EQ(info.description, row[c + 6]);
    }
    ++compared;
  }
  EXPECT_EQ(compared, 26);
  EXPECT_EQ(hlm::wfdb::list_records(data_path("mitdb")).size(), 26u);
}

TEST(WfdbReader, ReadsEveryMitdbRecordWithTheReferenceAnnotationCounts) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const auto table = read_tsv(data_path("reference/mitdb_annotation_counts.tsv"));
  ASSERT_GT(table.size(), 1u);
  const auto& columns = table[0];
  std::map<std::string, std::vector<std::string>> rows;
  for (size_t i = 1; i < table.size(); ++i) rows[table[i][0]] = table[i];
  for (const std::string& name : hlm::wfdb::list_records(data_path("mitdb"))) {
    SCOPED_TRACE("record " + name);
    const hlm::Record r = hlm::wfdb::read_record(data_path("mitdb"), name);
    EXPECT_EQ(r.frames, 650000);
    expect_checksums_and_initial_values(r);
    ASSERT_TRUE(rows.count(name));
    const auto& row = rows[name];
    std::map<std::string, int> counts;
    int beats = 0;
    for (const hlm::Annotation& a : r.annotations) {
      counts[hlm::wfdb::annotation_mnemonic(a.code)]++;
      beats += hlm::is_beat_code(a.code);
    }
    EXPECT_EQ(static_cast<int>(r.annotations.size()), std::stoi(row[1]));
    EXPECT_EQ(beats, std::stoi(row[2]));
    for (size_t c = 4; c + 2 < columns.size(); ++c)  // per-mnemonic columns
      EXPECT_EQ(counts[columns[c]], std::stoi(row[c])) << "mnemonic " << columns[c];
    EXPECT_EQ(r.annotations.front().sample, std::stoll(row[columns.size() - 2]));
    EXPECT_EQ(r.annotations.back().sample, std::stoll(row[columns.size() - 1]));
  }
}

TEST(WfdbReader, CountsLtafdbAnnotationsLikeTheReference) {
  HLM_REQUIRE_DATA("ltafdb");
  HLM_REQUIRE_DATA("reference");
  const auto table = read_tsv(data_path("reference/ltafdb_counts.tsv"));
  ASSERT_EQ(table.size(), 85u);
  EXPECT_EQ(hlm::wfdb::list_records(data_path("ltafdb")).size(), 84u);
  for (size_t i = 1; i < table.size(); ++i) {
    const auto& row = table[i];
    SCOPED_TRACE("record " + row[0]);
    // The header names .dat files that are not shipped: an annotation-only record.
    const hlm::Record r = hlm::wfdb::read_record(data_path("ltafdb"), row[0]);
    EXPECT_EQ(r.signals.size(), 2u);
    EXPECT_TRUE(r.digital.empty());
    EXPECT_EQ(r.sampling_hz, 128.0);
    EXPECT_EQ(r.frames, std::stoll(row[4]));
    EXPECT_EQ(static_cast<long>(r.annotations.size()), std::stol(row[1]));
    int afib_onsets = 0;
    for (const hlm::Annotation& a : r.annotations) afib_onsets += a.aux == "(AFIB";
    EXPECT_EQ(afib_onsets, std::stoi(row[3]));
    const auto qrs = hlm::wfdb::read_annotations(data_path("ltafdb/" + row[0] + ".qrs"));
    EXPECT_EQ(static_cast<long>(qrs.size()), std::stol(row[2]));
  }
}

TEST(WfdbReader, ReadsChallenge2017MatRecordsLikeRdsamp) {
  HLM_REQUIRE_DATA("challenge2017");
  HLM_REQUIRE_DATA("reference");
  const std::string dir = data_path("challenge2017");
  const hlm::Record a1 = hlm::wfdb::read_record(dir, "A00001");
  ASSERT_EQ(a1.signals.size(), 1u);
  EXPECT_EQ(a1.signals[0].format, 16);
  EXPECT_EQ(a1.signals[0].byte_offset, 24);
  EXPECT_EQ(a1.frames, 9000);
  const auto digital = read_rows(data_path("reference/c2017_A00001_first10samples_digital.txt"));
  ASSERT_EQ(digital.size(), 10u);
  for (size_t f = 0; f < digital.size(); ++f)
    EXPECT_EQ(a1.digital[0][f], std::stoi(digital[f][1])) << "frame " << f;
  const hlm::Record a4 = hlm::wfdb::read_record(dir, "A00004");
  const std::vector<float> p = a4.physical(0);
  const auto physical = read_rows(data_path("reference/c2017_A00004_first10samples_p.txt"));
  ASSERT_EQ(physical.size(), 10u);
  for (size_t f = 0; f < physical.size(); ++f)
    EXPECT_NEAR(p[f], std::stod(physical[f][1]), 0.0005 + 1e-6) << "frame " << f;
  EXPECT_EQ(a4.digital[0][0], a4.signals[0].initial_value);
  EXPECT_EQ(hlm::wfdb::list_records(dir).size(), 6000u);
}

TEST(WfdbReader, ReadsFormat16RecordWithTwoSignalFiles) {
  HLM_REQUIRE_DATA("wfdb-samples");
  const hlm::Record r = hlm::wfdb::read_record(data_path("wfdb-samples"), "s0010_re");
  ASSERT_EQ(r.signals.size(), 15u);
  EXPECT_EQ(r.frames, 38400);
  EXPECT_EQ(r.sampling_hz, 1000.0);
  EXPECT_EQ(r.signals[12].file_name, "s0010_re.xyz");
  EXPECT_EQ(r.signals[14].description, "vz");
  EXPECT_EQ(r.signals[0].gain, 2000.0);
  EXPECT_EQ(r.signals[0].units, "mV");
  EXPECT_EQ(r.signals[0].adc_resolution, 16);
  EXPECT_FALSE(r.comments.empty());
  expect_checksums_and_initial_values(r);
}

TEST(WfdbReader, ReadsFormat80RecordWithItsChecksums) {
  HLM_REQUIRE_DATA("wfdb-samples");
  const hlm::Record r = hlm::wfdb::read_record(data_path("wfdb-samples"), "3000003_0003");
  ASSERT_EQ(r.signals.size(), 2u);
  EXPECT_EQ(r.frames, 1028);
  EXPECT_EQ(r.sampling_hz, 125.0);
  EXPECT_EQ(r.signals[0].format, 80);
  EXPECT_EQ(r.signals[0].gain, 29.0);
  EXPECT_EQ(r.signals[1].description, "V");
  const hlm::wfdb::Header h = hlm::wfdb::read_header(data_path("wfdb-samples/3000003_0003.hea"));
  EXPECT_EQ(h.base_time, "19:46:25.757");
  expect_checksums_and_initial_values(r);
}

}  // namespace
