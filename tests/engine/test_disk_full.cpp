// Disk full while a run writes its token store, its logs or its report. The file size limit
// (RLIMIT_FSIZE, set by prlimit; SIGXFSZ ignored) makes a write past N bytes fail with EFBIG,
// as ENOSPC would on a full disk, at a size the test chooses, without root or a filesystem
// of its own. The output is read through a pipe, which the limit does not apply to.
#include <gtest/gtest.h>

#include <fstream>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::CommandResult;
using hlm::test::read_text;
using hlm::test::ScratchDir;

namespace {

struct TokenizeRun {
  ScratchDir dir;
  explicit TokenizeRun(const std::string& name) : dir("hlm_disk_full_" + name) {
    fs::create_directories(dir.path / "ecg");
    for (const std::string record : {"119", "208"})
      for (const std::string ext : {".hea", ".dat", ".atr"})
        fs::copy_file(fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb" / (record + ext),
                      dir.path / "ecg" / (record + ext));
    // One worker: records are written in order, so the limit falls inside the second one.
    std::ofstream(dir.path / "tokenize.yaml") << "name: disk-full\n"
                                                 "stages:\n"
                                                 "  - id: tokenize\n"
                                                 "    kind: tokenize\n"
                                                 "    params:\n"
                                                 "      threads: 1\n"
                                                 "      datasets: [{plugin: wfdb, dir: ecg}]\n"
                                                 "      tokenizer: {plugin: beat-vq, codes: 16}\n";
  }
  // hlm with its arguments, every file it writes limited to `max_file_bytes` (0: no limit).
  CommandResult hlm(const std::string& args, long max_file_bytes = 0) {
    const std::string limit =
        max_file_bytes > 0 ? "prlimit --fsize=" + std::to_string(max_file_bytes) + " " : "";
    return hlm::test::run_command("cd '" + dir.path.string() +
                                  "' && bash -c \"trap '' XFSZ; exec " + limit +
                                  "'" HLM_BINARY_DIR "/bin/hlm' " + args + "\" 2>&1");
  }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// The store's record log reaches the limit in the second record: the stage fails naming the
// file, the first record stays in the log, and once space is back the resume writes only the
// second record and ends with the store an uninterrupted run writes, byte for byte.
TEST(DiskFull, WhileTheTokenStoreIsWrittenTheRecordsWrittenAreKeptAndTheRunResumes) {
  TokenizeRun full("uninterrupted");
  const auto full_run = full.hlm("run tokenize.yaml --runs-dir runs");
  ASSERT_EQ(full_run.exit_code, 0) << full_run.output;
  const fs::path full_store = hlm::test::run_dir_of(full_run.output) / "tokenize/tokens.hlmt";
  ASSERT_GT(fs::file_size(full_store), 60000u);  // both records, about 74 kB

  TokenizeRun cut("cut");
  const auto failed = cut.hlm("run tokenize.yaml --runs-dir runs", 40000);
  EXPECT_NE(failed.exit_code, 0) << failed.output;
  const fs::path run_dir = hlm::test::run_dir_of(failed.output);
  const fs::path log = run_dir / "tokenize/tokens.hlmt.tmp";
  EXPECT_TRUE(contains(failed.output, log.string() + ": write failed: File too large (disk full?)"))
      << failed.output;
  EXPECT_TRUE(contains(failed.output, "continue with: hlm run --resume " + run_dir.string()))
      << failed.output;
  EXPECT_EQ(hlm::test::stage_manifest(run_dir, "tokenize")["status"], "failed");
  EXPECT_FALSE(fs::exists(run_dir / "tokenize/tokens.hlmt"));

  const auto resumed = cut.hlm("run --resume " + run_dir.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "resuming with 1 records already tokenized"))
      << resumed.output;
  EXPECT_EQ(read_text(run_dir / "tokenize/tokens.hlmt"), read_text(full_store));
}

// A finished run resumed with every file limited to 400 bytes: the run log and the metrics
// log are already larger, so their lines fail (said once each, naming the file, and the run
// goes on); the report fails with an error naming it and the previous report is unchanged.
// With space back, the resume writes the report.
TEST(DiskFull, WhileALogOrTheReportIsWrittenTheRunNamesTheFileAndKeepsWhatWasWritten) {
  TokenizeRun run("logs");
  const auto first = run.hlm("run tokenize.yaml --runs-dir runs");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const fs::path run_dir = hlm::test::run_dir_of(first.output);
  const std::string log = read_text(run_dir / "hlm.log");
  const std::string metrics = read_text(run_dir / "metrics.jsonl");
  const std::string report = read_text(run_dir / "report.md");
  ASSERT_GT(log.size(), 400u);
  ASSERT_GT(metrics.size(), 400u);
  ASSERT_GT(report.size(), 400u);

  const auto full = run.hlm("run --resume " + run_dir.string(), 400);
  EXPECT_NE(full.exit_code, 0) << full.output;
  EXPECT_TRUE(
      contains(full.output, "warning: cannot write the run log " + (run_dir / "hlm.log").string()))
      << full.output;
  EXPECT_TRUE(contains(
      full.output, "warning: cannot write the metrics log " + (run_dir / "metrics.jsonl").string()))
      << full.output;
  EXPECT_TRUE(contains(full.output, "tokenize: reused from cache")) << full.output;
  EXPECT_TRUE(
      contains(full.output, "error: " + (run_dir / "report.md").string() + ": cannot write"))
      << full.output;
  EXPECT_EQ(read_text(run_dir / "hlm.log"), log);
  EXPECT_EQ(read_text(run_dir / "metrics.jsonl"), metrics);
  EXPECT_EQ(read_text(run_dir / "report.md"), report);
  EXPECT_FALSE(hlm::test::temp_file_left((run_dir / "report.md").string()));

  const auto freed = run.hlm("run --resume " + run_dir.string());
  ASSERT_EQ(freed.exit_code, 0) << freed.output;
  EXPECT_TRUE(contains(read_text(run_dir / "report.md"), "| tokenize |"));
  EXPECT_GT(read_text(run_dir / "hlm.log").size(), log.size());
}
