// Run directories: owner-only, and one per run even when runs start in the same second; stage
// manifests checked by their checksum.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "engine/run_directory.h"
#include "hlm/errors.h"

namespace fs = std::filesystem;

TEST(RunDirectory, IsOwnerOnlyAndUniqueForRunsStartedTogether) {
  const fs::path runs = fs::temp_directory_path() / ("hlm_run_dirs_" + std::to_string(::getpid()));
  fs::remove_all(runs);
  std::vector<std::string> dirs(8);
  std::vector<std::thread> starts;
  for (size_t i = 0; i < dirs.size(); ++i)
    starts.emplace_back([&, i] { dirs[i] = hlm::new_run_directory(runs.string(), "wf", "same"); });
  for (auto& t : starts) t.join();
  EXPECT_EQ(std::set<std::string>(dirs.begin(), dirs.end()).size(), dirs.size());
  for (const auto& dir : dirs) {
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_EQ(fs::status(dir).permissions() & fs::perms::mask, fs::perms::owner_all) << dir;
  }
  fs::remove_all(runs);
}

// A stage's manifest carries a checksum of its content: a flipped byte or a truncation is an
// error naming the file and what to do, never results read as if valid.
class ManifestFile : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("hlm_manifest_" + std::to_string(::getpid()));
  fs::path file = dir / "manifest.json";
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    hlm::write_manifest(dir.string(), {{"id", "evaluate"},
                                       {"status", "done"},
                                       {"results", {{"accuracy", 0.9375}, {"beats", 4096}}}});
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string text() {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write(const std::string& s) { std::ofstream(file, std::ios::trunc) << s; }
  std::string read_error() {
    try {
      hlm::read_manifest(dir.string());
    } catch (const hlm::Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(ManifestFile, ReadsBackWhatWasWrittenWithoutTheChecksumKey) {
  const auto m = hlm::read_manifest(dir.string());
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["results"]["accuracy"], 0.9375);
  EXPECT_FALSE(m->contains("checksum"));
  EXPECT_NE(text().find("\"checksum\""), std::string::npos);
  EXPECT_FALSE(hlm::read_manifest((dir / "absent").string()));
}

TEST_F(ManifestFile, AFlippedByteThatKeepsTheJsonValidFailsItsChecksumAndIsNamed) {
  std::string s = text();
  const size_t at = s.find("0.9375");
  ASSERT_NE(at, std::string::npos);
  s[at + 2] = '8';  // 0.8375: still a number, a wrong result
  write(s);
  const std::string error = read_error();
  EXPECT_NE(error.find(file.string() + ": checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find("delete the folder " + dir.string()), std::string::npos) << error;
}

TEST_F(ManifestFile, ATruncatedManifestIsAnErrorNamingTheFile) {
  write(text().substr(0, text().size() / 2));
  const std::string error = read_error();
  EXPECT_NE(error.find(file.string() + ": not a valid manifest, truncated or corrupt"),
            std::string::npos)
      << error;
}

TEST_F(ManifestFile, OneWrittenBeforeChecksumsIsReadAsIs) {
  write(R"({"id": "tokenize", "status": "done"})");
  const auto m = hlm::read_manifest(dir.string());
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["status"], "done");
}
