// `hlm qrs-eval`, run as a user runs it: the built binary on MIT-BIH records, checking the
// per-record lines, the gross line's format and plausible scores. Skips when the binary is not
// built (target hlm) or the PhysioNet data is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "support/hlm_cli.h"

namespace {

const std::string kMitdb = std::string(HLM_TEST_DATA_DIR) + "/mitdb";

// The binary is a build dependency of this test: missing, it is a failure. Data may be absent.
#define HLM_REQUIRE_BINARY_AND(path)                                                            \
  ASSERT_TRUE(std::filesystem::exists(HLM_BINARY_DIR "/bin/hlm")) << HLM_BINARY_DIR "/bin/hlm"; \
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent"

}  // namespace

TEST(QrsEval, ScoresNamedRecordsAndEndsWithTheGrossLine) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/208.hea");
  const auto r = hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 101 208 209 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* record : {"101", "208", "209"})
    EXPECT_TRUE(std::regex_search(
        r.output, std::regex(std::string("\n") + record +
                             R"( +\d+ +\d+ +\d+ +\d+\.\d\d +\d+\.\d\d +\d+ +\d+\.\d\d\n)")))
        << record << " has no score line:\n"
        << r.output;
  std::smatch m;
  const std::regex gross(
      R"(gross TP=(\d+) FN=(\d+) FP=(\d+) Se=(\d+\.\d\d) \+P=(\d+\.\d\d) V=(\d+) V_Se=(\d+\.\d\d)\n$)");
  ASSERT_TRUE(std::regex_search(r.output, m, gross)) << "the last line is not the gross line:\n"
                                                     << r.output;
  const long tp = std::stol(m[1]), fn = std::stol(m[2]), fp = std::stol(m[3]);
  // Reference beats (WFDB isqrs) per mitdb_annotation_counts.tsv: 1865 + 2955 + 3005.
  EXPECT_EQ(tp + fn, 1865 + 2955 + 3005);
  // Their ventricular (AAMI V: V and E) beats: 0 + 992 + 1.
  EXPECT_EQ(std::stol(m[6]), 0 + 992 + 1);
  EXPECT_GE(std::stod(m[7]), 99.0);
  EXPECT_GE(std::stod(m[4]), 99.0);
  EXPECT_GE(std::stod(m[5]), 99.0);
  EXPECT_NEAR(std::stod(m[4]), 100.0 * double(tp) / double(tp + fn), 0.005);
  EXPECT_NEAR(std::stod(m[5]), 100.0 * double(tp) / double(tp + fp), 0.005);
}

TEST(QrsEval, AnAnnotationOnlyRecordIsReportedByNameAndFailsTheRun) {
  const std::string ltafdb = std::string(HLM_TEST_DATA_DIR) + "/ltafdb";
  HLM_REQUIRE_BINARY_AND(ltafdb + "/00.hea");
  const auto r = hlm::test::run_hlm("qrs-eval '" + ltafdb + "' 00");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ltafdb/00: no signal samples"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gross TP=0 FN=0 FP=0"), std::string::npos) << r.output;
}

TEST(QrsEval, AnUnknownRecordNamesItsMissingHeader) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/208.hea");
  const auto r = hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 999");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("999.hea"), std::string::npos) << r.output;
}

TEST(QrsEval, ErrorsFileListsEveryMissedAndFalseBeatOfTheScoreLines) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/208.hea");
  const std::string csv =
      (std::filesystem::temp_directory_path() / "hlm_qrs_eval_errors.csv").string();
  std::filesystem::remove(csv);
  const auto r =
      hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 101 208 --lead 0 --errors '" + csv + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(csv);
  ASSERT_TRUE(in) << csv << " was not written";
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "record,sample,seconds,error,annotation");
  std::map<std::string, long> missed, false_beats;
  long previous = -1;
  while (std::getline(in, line)) {
    std::smatch m;
    ASSERT_TRUE(
        std::regex_match(line, m, std::regex(R"((\w+),(\d+),(\d+\.\d{3}),(missed|false),(.*))")))
        << line;
    (m[4] == "missed" ? missed : false_beats)[m[1]]++;
    // A missed beat names its annotation, a beat code (WFDB's isqrs); a false one has none.
    if (m[4] == "missed")
      EXPECT_TRUE(std::regex_match(m[5].str(), std::regex(R"([NLRaVFJASEj/fQ?!enrB])"))) << line;
    else
      EXPECT_EQ(m[5].length(), 0) << line;
    if (m[1] == "208") {
      EXPECT_GE(std::stol(m[2]), previous) << "rows out of sample order";
      previous = std::stol(m[2]);
    }
    EXPECT_NEAR(std::stod(m[3]), std::stod(m[2]) / 360.0, 0.0006) << line;
  }
  // The rows are the score lines' FN and FP, record by record.
  for (const char* record : {"101", "208"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.output, m, std::regex(std::string("\n") + record + R"( +\d+ +(\d+) +(\d+) )")))
        << r.output;
    EXPECT_EQ(missed[record], std::stol(m[1])) << record;
    EXPECT_EQ(false_beats[record], std::stol(m[2])) << record;
  }
  EXPECT_GT(missed["208"] + false_beats["208"], 0) << "208 has no error to list: nothing tested";
  std::filesystem::remove(csv);
}

TEST(QrsEval, LeavesVentricularFlutterEpisodesOutAsEc57Does) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/207.hea");
  const auto r = hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 207 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 207's beat annotations: 2332, of them 472 flutter waves, all inside its six '[' ... ']'
  // episodes (mitdb_annotation_counts.tsv); bxb scores the other 1860.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(gross TP=(\d+) FN=(\d+) FP=(\d+) )")))
      << r.output;
  EXPECT_EQ(std::stol(m[1]) + std::stol(m[2]), 2332 - 472) << r.output;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"(inside ventricular flutter or fibrillation episodes \(as EC57 and bxb\): )"
                 R"((\d+) reference beats, (\d+) detections)")))
      << r.output;
  EXPECT_EQ(std::stol(m[1]), 472);
}

// The same hearts at the ends of the range the detector must cover (128 to 1000 Hz): record
// 208 (frequent PVCs, couplets, fusion beats) resampled, its annotations moved with it, keeps
// every reference beat and scores about as at its own 360 Hz (Se 99.80, +P 99.56 there).
TEST(QrsEval, ScoresARecordResampledToAnotherRate) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/208.hea");
  for (const char* rate : {"128", "1000"}) {
    const auto r = hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 208 --rate " + rate);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("scored at ") + rate + " Hz: records at another rate"),
              std::string::npos)
        << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.output, m, std::regex(R"(gross TP=(\d+) FN=(\d+) FP=(\d+) Se=(\S+) \+P=(\S+) )")))
        << r.output;
    EXPECT_EQ(std::stol(m[1]) + std::stol(m[2]), 2955) << rate;
    EXPECT_GE(std::stod(m[4]), 99.5) << rate;
    EXPECT_GE(std::stod(m[5]), 99.3) << rate;
  }
  const auto bad = hlm::test::run_hlm("qrs-eval '" + kMitdb + "' 208 --rate -5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--rate -5"), std::string::npos) << bad.output;
}

// Reference beats may live in another annotation file than NAME.atr (bxb's -a): --annotator
// names it. A record with no reference beat is not scored (every detection would count as a
// false one) but reported, naming the file and the option.
TEST(QrsEval, ReadsTheReferenceBeatsOfTheAnnotatorNamedAndRefusesARecordWithout) {
  HLM_REQUIRE_BINARY_AND(kMitdb + "/208.hea");
  const hlm::test::ScratchDir copy("hlm_qrs_eval_annotator");
  for (const char* suffix : {".hea", ".dat"})
    std::filesystem::copy_file(kMitdb + "/208" + suffix, copy.path / (std::string("208") + suffix));
  std::filesystem::copy_file(kMitdb + "/208.atr", copy.path / "208.ref");
  const std::string dir = copy.path.string();
  const auto named = hlm::test::run_hlm("qrs-eval '" + dir + "' 208 --annotator ref");
  ASSERT_EQ(named.exit_code, 0) << named.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(named.output, m, std::regex(R"(gross TP=(\d+) FN=(\d+) )")));
  EXPECT_EQ(std::stol(m[1]) + std::stol(m[2]), 2955);
  const auto missing = hlm::test::run_hlm("qrs-eval '" + dir + "' 208");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("no reference beat in 208.atr"), std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("--annotator"), std::string::npos);
  EXPECT_NE(missing.output.find("gross TP=0 FN=0 FP=0"), std::string::npos) << missing.output;
  // A suffix written as a file extension would name 208..ref: refused, saying what to give.
  const auto dotted = hlm::test::run_hlm("qrs-eval '" + dir + "' 208 --annotator .ref");
  EXPECT_NE(dotted.exit_code, 0);
  EXPECT_NE(dotted.output.find("give the annotation file's suffix alone"), std::string::npos)
      << dotted.output;
}
