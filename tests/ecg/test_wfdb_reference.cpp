// Conformance of the WFDB reader on MIT-BIH record 208 against the WFDB package's own output
// (rdsamp, rdann, sumann, wfdbdesc) stored in shared/data/reference.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "hlm/wfdb.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::data_path;
using hlm::test::read_rows;

hlm::Record read_208() { return hlm::wfdb::read_record(data_path("mitdb"), "208"); }

TEST(WfdbReader, DecodesRecord208LikeRdsamp) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const hlm::Record r = read_208();
  const auto rows = read_rows(data_path("reference/208_rdsamp_full_digital.txt.gz"));
  ASSERT_EQ(rows.size(), 650000u) << "gzip -dc failed or the reference is incomplete";
  ASSERT_EQ(r.frames, 650000);
  ASSERT_EQ(r.digital.size(), 2u);
  int64_t mismatches = 0;
  for (size_t f = 0; f < rows.size(); ++f) {
    ASSERT_EQ(rows[f].size(), 3u) << "line " << f + 1;
    ASSERT_EQ(std::stoll(rows[f][0]), static_cast<long long>(f));
    for (int s = 0; s < 2; ++s)
      if (r.digital[s][f] != std::stoi(rows[f][s + 1]) && ++mismatches <= 5)
        ADD_FAILURE() << "frame " << f << " signal " << s << ": got " << r.digital[s][f]
                      << ", rdsamp " << rows[f][s + 1];
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(WfdbReader, MatchesRdsampFirstFramesInDigitalAndPhysicalUnits) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const hlm::Record r = read_208();
  const auto digital = read_rows(data_path("reference/208_rdsamp_first10samples_digital.txt"));
  ASSERT_EQ(digital.size(), 10u);
  for (size_t f = 0; f < digital.size(); ++f)
    for (int s = 0; s < 2; ++s) EXPECT_EQ(r.digital[s][f], std::stoi(digital[f][s + 1]));
  const std::vector<float> p0 = r.physical(0), p1 = r.physical(1);
  // -p prints 3 decimals; -P -v prints 8.
  const struct {
    const char* file;
    size_t skip;
    double tolerance;
  } dumps[] = {{"reference/208_rdsamp_first10samples_p.txt", 0, 0.0005 + 1e-6},
               {"reference/208_rdsamp_first10sec_p.txt", 0, 0.0005 + 1e-6},
               {"reference/208_rdsamp_first10sec_Pv.txt", 2, 1e-6}};
  for (const auto& dump : dumps) {
    const auto rows = read_rows(data_path(dump.file));
    ASSERT_GT(rows.size(), dump.skip) << dump.file;
    for (size_t i = dump.skip; i < rows.size(); ++i) {
      const size_t f = i - dump.skip;
      EXPECT_NEAR(static_cast<double>(f) / r.sampling_hz, std::stod(rows[i][0]), 0.0005 + 1e-9)
          << dump.file << " frame " << f;
      EXPECT_NEAR(p0[f], std::stod(rows[i][1]), dump.tolerance) << dump.file << " frame " << f;
      EXPECT_NEAR(p1[f], std::stod(rows[i][2]), dump.tolerance) << dump.file << " frame " << f;
    }
  }
  EXPECT_EQ(read_rows(data_path("reference/208_rdsamp_first10sec_p.txt")).size(), 3600u);
}

TEST(WfdbReader, ReadsEveryAnnotationOf208LikeRdann) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const hlm::Record r = read_208();
  const auto rows = read_rows(data_path("reference/208_rdann_atr.txt"));
  ASSERT_EQ(rows.size(), 3040u);
  ASSERT_EQ(r.annotations.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const hlm::Annotation& a = r.annotations[i];
    const auto& row = rows[i];
    ASSERT_GE(row.size(), 6u);
    SCOPED_TRACE("annotation " + std::to_string(i) + " at sample " + row[1]);
    EXPECT_EQ(hlm::wfdb::elapsed_time_string(a.sample, r.sampling_hz), row[0]);
    EXPECT_EQ(a.sample, std::stoll(row[1]));
    EXPECT_STREQ(hlm::wfdb::annotation_mnemonic(a.code), row[2].c_str());
    EXPECT_EQ(a.subtype, std::stoi(row[3]));
    EXPECT_EQ(a.channel, std::stoi(row[4]));
    EXPECT_EQ(a.num, std::stoi(row[5]));
    EXPECT_EQ(a.aux, row.size() > 6 ? row[6] : "");
  }
}

TEST(WfdbReader, Counts208BeatsByAamiClassLikeSumann) {
  HLM_REQUIRE_DATA("mitdb");
  const hlm::Record r =
      hlm::wfdb::read_record(data_path("mitdb"), "208", {"atr", /*read_signals=*/false, true});
  EXPECT_TRUE(r.digital.empty());
  std::map<std::string, int> by_class;
  std::map<std::string, int> by_mnemonic;
  for (const hlm::Annotation& a : r.annotations) {
    by_mnemonic[hlm::wfdb::annotation_mnemonic(a.code)]++;
    if (hlm::is_beat_code(a.code)) by_class[hlm::beat_class_name(hlm::aami_class(a.code))]++;
  }
  EXPECT_EQ(by_class,
            (std::map<std::string, int>{{"N", 1586}, {"V", 992}, {"F", 373}, {"S", 2}, {"Q", 2}}));
  // sumann's table for 208.atr, rhythm and noise annotations included.
  EXPECT_EQ(by_mnemonic, (std::map<std::string, int>{{"N", 1586},
                                                     {"V", 992},
                                                     {"F", 373},
                                                     {"S", 2},
                                                     {"Q", 2},
                                                     {"~", 24},
                                                     {"|", 8},
                                                     {"+", 53}}));
}

// The inter-patient protocol's training set, counted by AAMI class, gives de Chazal 2004's
// table exactly; record 207's 472 ventricular flutter waves ('!') are beats to WFDB but belong
// to no AAMI class, so they are scored in none.
TEST(WfdbReader, CountsDs1BeatsByAamiClassLikeDeChazal) {
  HLM_REQUIRE_DATA("mitdb");
  std::map<std::string, int> by_class;
  int beats_of_no_class = 0;
  for (const char* name : hlm::test::kDs1Records) {
    const hlm::Record r =
        hlm::wfdb::read_record(data_path("mitdb"), name, {"atr", /*read_signals=*/false, true});
    for (const hlm::Annotation& a : r.annotations) {
      if (!hlm::is_beat_code(a.code)) continue;
      const hlm::BeatClass c = hlm::aami_class(a.code);
      if (c == hlm::BeatClass::kNone)
        ++beats_of_no_class;
      else
        by_class[hlm::beat_class_name(c)]++;
    }
  }
  EXPECT_EQ(by_class, (std::map<std::string, int>{
                          {"N", 45866}, {"S", 944}, {"V", 3788}, {"F", 415}, {"Q", 8}}));
  EXPECT_EQ(beats_of_no_class, 472);
}

TEST(WfdbReader, DescribesRecord208LikeWfdbdesc) {
  HLM_REQUIRE_DATA("mitdb");
  HLM_REQUIRE_DATA("reference");
  const hlm::wfdb::Header h = hlm::wfdb::read_header(data_path("mitdb/208.hea"));
  EXPECT_EQ(h.record, "208");
  EXPECT_EQ(h.sampling_hz, 360.0);
  EXPECT_EQ(h.counter_hz, 360.0);
  EXPECT_EQ(h.frames, 650000);
  EXPECT_EQ(h.base_time, "");
  ASSERT_EQ(h.comments.size(), 5u);
  EXPECT_EQ(h.comments[0], "23 F 2546 N/A x1");
  // wfdbdesc prints "Key: value" per signal; collect them in order.
  std::vector<std::map<std::string, std::string>> described;
  std::ifstream in(data_path("reference/208_wfdbdesc.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Group ", 0) == 0) described.emplace_back();
    const size_t colon = line.find(": ");
    if (!described.empty() && line.size() > 1 && line[0] == ' ' && colon != std::string::npos)
      described.back()[line.substr(1, colon - 1)] = line.substr(colon + 2);
  }
  ASSERT_EQ(described.size(), h.signals.size());
  for (size_t s = 0; s < h.signals.size(); ++s) {
    const hlm::SignalInfo& info = h.signals[s];
    auto& d = described[s];
    EXPECT_EQ(d["File"], info.file_name);
    EXPECT_EQ(d["Description"], info.description);
    EXPECT_EQ(d["Gain"], std::to_string(static_cast<int>(info.gain)) + " adu/" + info.units);
    EXPECT_EQ(d["Initial value"], std::to_string(info.initial_value));
    EXPECT_EQ(d["Storage format"], std::to_string(info.format));
    EXPECT_EQ(d["ADC resolution"], std::to_string(info.adc_resolution) + " bits");
    EXPECT_EQ(d["ADC zero"], std::to_string(info.adc_zero));
    EXPECT_EQ(d["Baseline"], std::to_string(info.baseline));
    EXPECT_EQ(d["Checksum"], std::to_string(info.checksum));
  }
}

}  // namespace
