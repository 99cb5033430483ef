// Bad records do not stop a tokenize stage: a truncated, missing or unreadable signal file or
// an implausible header is reported with the record's name, the problem and what to do, on
// the console and in the report, and every other record is still tokenized.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

// Records 208 and 209 of the shipped MIT-BIH excerpt in dir/mitdb, and a workflow that
// tokenizes that folder in dir/wf.yaml.
fs::path two_records(const fs::path& dir) {
  const fs::path data = dir / "mitdb";
  fs::create_directories(data);
  for (const char* record : {"208", "209"})
    for (const char* ext : {".hea", ".dat", ".atr"})
      fs::copy_file(fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb" / (std::string(record) + ext),
                    data / (std::string(record) + ext));
  std::ofstream(dir / "wf.yaml")
      << "name: bad-data\nstages:\n  - id: tokenize\n    kind: tokenize\n"
      << "    params:\n      datasets: [{plugin: wfdb, dir: '" << data.string()
      << "'}]\n      tokenizer: {plugin: beat-vq, codes: 8}\n";
  return data;
}

hlm::test::CommandResult run_in(const fs::path& dir) {
  return hlm::test::run_hlm("run " + (dir / "wf.yaml").string() + " --runs-dir " +
                            (dir / "runs").string());
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TokenizeBadData, ATruncatedRecordIsReportedAndTheOthersFinish) {
  hlm::test::ScratchDir dir("hlm_bad_data");
  const fs::path data = two_records(dir.path);
  fs::resize_file(data / "209.dat", fs::file_size(data / "209.dat") / 2);  // cut in the middle
  const auto r = run_in(dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 failed"), std::string::npos) << r.output;
  const fs::path report = hlm::test::report_path(r.output);
  std::ifstream in(report.parent_path() / "tokenize" / "manifest.json");
  const auto results = nlohmann::json::parse(in)["results"];
  EXPECT_EQ(results["records"], 1);
  ASSERT_EQ(results["failed_records"].size(), 1u);
  const std::string failure = results["failed_records"][0];
  EXPECT_EQ(failure.rfind("209: ", 0), 0u) << failure;
  EXPECT_NE(failure.find("209.dat"), std::string::npos) << failure;
  EXPECT_TRUE(contains(r.output, "tokenize: record 209: ")) << r.output;  // on the console too
}

// Before: "0 signal(s) with samples ... HINT: set the tokenizer's lead".
TEST(TokenizeBadDataMessages, AMissingOrFifoSignalFileIsNamedWithWhatToDo) {
  hlm::test::ScratchDir dir("hlm_bad_data_missing");
  const fs::path data = two_records(dir.path);
  fs::remove(data / "209.dat");
  ASSERT_EQ(::mkfifo((data / "209.dat").c_str(), 0600), 0);
  const auto r = run_in(dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "in 209.dat, but that file is missing beside the header or is "
                       "not a regular file"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "set the tokenizer's lead")) << r.output;
}

// Before: "no RECORDS file entries and no .hea files", with the headers right there.
TEST(TokenizeBadDataMessages, AnEmptyRecordsFileNamesTheHeadersBesideIt) {
  hlm::test::ScratchDir dir("hlm_bad_data_records");
  const fs::path data = two_records(dir.path);
  std::ofstream(data / "RECORDS") << "\n";
  const auto r = run_in(dir.path);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "RECORDS: lists 0 record(s), none with a .hea header beside it, "
                       "while the folder holds 2 header(s)"))
      << r.output;
}

// Before: "no beats to fit the tokenizer on", naming no record. Flat signals hold no beat.
TEST(TokenizeBadDataMessages, NoBeatsToFitACodebookOnNamesTheRecordsAndWhatToCheck) {
  hlm::test::ScratchDir dir("hlm_bad_data_flat");
  const fs::path data = two_records(dir.path);
  for (const char* record : {"208", "209"}) {
    const fs::path dat = data / (std::string(record) + ".dat");
    const auto size = fs::file_size(dat);
    std::ofstream(dat, std::ios::binary | std::ios::trunc) << std::string(size, '\0');
  }
  const auto r = run_in(dir.path);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "no beats to fit the tokenizer on in 2 record(s) (208, 209): "
                       "the detector found none; check the tokenizer's lead"))
      << r.output;
}

// Before: a header saying 1 Hz was read as such, and yielded hundreds of thousands of "beats".
TEST(TokenizeBadDataMessages, ARecordSampledTooSlowlyForAnEcgIsRefusedNamingTheRate) {
  hlm::test::ScratchDir dir("hlm_bad_data_rate");
  const fs::path data = two_records(dir.path);
  std::string header = hlm::test::read_text(data / "209.hea");
  const size_t rate = header.find(" 360 ");
  ASSERT_NE(rate, std::string::npos) << header;
  header.replace(rate, 5, " 1 ");
  std::ofstream(data / "209.hea") << header;
  const auto r = run_in(dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "sampled at 1 Hz, below the 50 Hz")) << r.output;
}

}  // namespace
