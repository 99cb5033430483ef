// Bad records do not stop a tokenize stage: a truncated signal file is reported with the
// record's name and the problem, and every other record is still tokenized.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

TEST(TokenizeBadData, ATruncatedRecordIsReportedAndTheOthersFinish) {
  hlm::test::ScratchDir dir("hlm_bad_data");
  const fs::path data = dir.path / "mitdb";
  fs::create_directories(data);
  for (const char* record : {"208", "209"})
    for (const char* ext : {".hea", ".dat", ".atr"})
      fs::copy_file(fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb" / (std::string(record) + ext),
                    data / (std::string(record) + ext));
  fs::resize_file(data / "209.dat", fs::file_size(data / "209.dat") / 2);  // cut in the middle
  std::ofstream(dir.path / "wf.yaml")
      << "name: bad-data\nstages:\n  - id: tokenize\n    kind: tokenize\n"
      << "    params:\n      datasets: [{plugin: wfdb, dir: '" << data.string()
      << "'}]\n      tokenizer: {plugin: beat-vq, codes: 8}\n";
  const auto r = hlm::test::run_hlm("run " + (dir.path / "wf.yaml").string() + " --runs-dir " +
                                    (dir.path / "runs").string());
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
}

}  // namespace
