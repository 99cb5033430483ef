// The stage cache: a finished stage is reused only when everything it read is unchanged. The
// tokenize stage re-runs when a record is edited (touched) or added, or when a relative `dir:`
// names another folder because hlm was started elsewhere; --dry-run says why.
#include <gtest/gtest.h>

#include <fstream>

#include "support/hlm_cli.h"

namespace fs = std::filesystem;
using hlm::test::CommandResult;
using hlm::test::run_hlm;
using hlm::test::ScratchDir;

namespace {

// hlm started in `cwd` (run_hlm starts it in the source root).
CommandResult run_hlm_in(const fs::path& cwd, const std::string& args) {
  return hlm::test::run_command("cd '" + cwd.string() + "' && '" HLM_BINARY_DIR "/bin/hlm' " +
                                args + " 2>&1");
}

struct Fixture {
  ScratchDir dir{"hlm_cache_key"};
  fs::path workflow = dir.path / "tokenize.yaml";
  Fixture() {
    fs::create_directories(dir.path / "ecg");
    for (const std::string record : {"119", "208"})
      for (const std::string ext : {".hea", ".dat", ".atr"})
        fs::copy_file(fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb" / (record + ext),
                      dir.path / "ecg" / (record + ext));
    // A relative folder: resolved against the directory hlm is started in.
    std::ofstream(workflow) << "name: cache-key\n"
                               "stages:\n"
                               "  - id: tokenize\n"
                               "    kind: tokenize\n"
                               "    params:\n"
                               "      datasets: [{plugin: wfdb, dir: ecg}]\n"
                               "      tokenizer: {plugin: beat-vq, codes: 16}\n";
  }
  CommandResult run(const std::string& extra = "") {
    return run_hlm_in(dir.path, "run tokenize.yaml --runs-dir runs " + extra);
  }
  bool reused(const CommandResult& r) {
    return r.output.find("tokenize: reused from cache") != std::string::npos;
  }
};

TEST(CacheKey, ATouchedOrAddedRecordMakesTokenizeRunAgain) {
  Fixture f;
  const auto first = f.run();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_FALSE(f.reused(first)) << first.output;
  const auto again = f.run();
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(f.reused(again)) << again.output;
  EXPECT_NE(f.run("--dry-run").output.find("reuse:   reused from "), std::string::npos);

  // An edited record: same size, a new modification time.
  const fs::path signal = f.dir.path / "ecg" / "119.dat";
  fs::last_write_time(signal, fs::last_write_time(signal) + std::chrono::seconds(5));
  const auto plan = f.run("--dry-run");
  EXPECT_NE(plan.output.find("reuse:   runs: data changed since "), std::string::npos)
      << plan.output;
  const auto touched = f.run();
  ASSERT_EQ(touched.exit_code, 0) << touched.output;
  EXPECT_FALSE(f.reused(touched)) << touched.output;
  EXPECT_NE(touched.output.find("2 records"), std::string::npos) << touched.output;

  // A new record in the folder.
  for (const std::string ext : {".hea", ".dat", ".atr"})
    fs::copy_file(fs::path(HLM_SOURCE_DIR) / "workflows/data/mitdb" / ("209" + ext),
                  f.dir.path / "ecg" / ("209" + ext));
  const auto added = f.run();
  ASSERT_EQ(added.exit_code, 0) << added.output;
  EXPECT_FALSE(f.reused(added)) << added.output;
  EXPECT_NE(added.output.find("3 records"), std::string::npos) << added.output;
}

TEST(CacheKey, ARelativeFolderSeenFromAnotherDirectoryIsOtherData) {
  Fixture f;
  const auto first = f.run();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // The same workflow and runs folder from a directory where `ecg` is another copy.
  const fs::path elsewhere = f.dir.path / "elsewhere";
  fs::create_directories(elsewhere);
  fs::copy(f.dir.path / "ecg", elsewhere / "ecg");
  const std::string args = "run ../tokenize.yaml --runs-dir ../runs";
  const auto plan = run_hlm_in(elsewhere, args + " --dry-run");
  EXPECT_NE(plan.output.find("reuse:   runs: data changed since "), std::string::npos)
      << plan.output;
  const auto r = run_hlm_in(elsewhere, args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(f.reused(r)) << r.output;
}

// A finished stage's manifest with a flipped byte: a later run does not reuse the stage (it
// says why and runs it again), and resuming the run it belongs to stops, naming the file and
// the folder to delete; after that the resume runs the stage again.
TEST(CacheKey, ACorruptManifestIsNeverReusedAndIsNamedOnResume) {
  Fixture f;
  const auto first = f.run();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  fs::path run_dir;
  for (const auto& entry : fs::directory_iterator(f.dir.path / "runs" / "cache-key"))
    run_dir = entry.path();
  const fs::path manifest = run_dir / "tokenize" / "manifest.json";
  std::string text = hlm::test::read_text(manifest);
  const std::string count =
      "\"records\": " + nlohmann::json::parse(text)["results"]["records"].dump();
  const size_t at = text.find(count);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, count.size(), "\"records\": 7");  // a wrong result, still valid JSON
  std::ofstream(manifest, std::ios::trunc) << text;

  const auto later = f.run();
  ASSERT_EQ(later.exit_code, 0) << later.output;
  EXPECT_FALSE(f.reused(later)) << later.output;
  EXPECT_NE(later.output.find(manifest.string() + ": checksum mismatch"), std::string::npos)
      << later.output;

  const auto resumed = run_hlm_in(f.dir.path, "run --resume " + run_dir.string());
  EXPECT_NE(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(manifest.string() + ": checksum mismatch"), std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("delete the folder " + (run_dir / "tokenize").string()),
            std::string::npos)
      << resumed.output;
  fs::remove_all(run_dir / "tokenize");
  const auto rerun = run_hlm_in(f.dir.path, "run --resume " + run_dir.string());
  EXPECT_EQ(rerun.exit_code, 0) << rerun.output;
}

}  // namespace
