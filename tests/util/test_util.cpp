// The small helpers every cache key, error message and written file rests on: FNV-1a against
// its published test vectors, hex formatting, did-you-mean suggestions, build IDs of loaded
// code, and whole-or-nothing file writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "support/hlm_cli.h"
#include "util/atomic_file.h"
#include "util/build_id.h"

namespace {

// Test vectors from the FNV reference (Fowler, Noll, Vo; the 64-bit FNV-1a column).
TEST(Util, Fnv1a64MatchesTheReferenceVectors) {
  EXPECT_EQ(hlm::fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hlm::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(hlm::fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(hlm::hex64(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
  EXPECT_EQ(hlm::hex64(1), "0000000000000001");
}

TEST(Util, SuggestsOnlyACloseName) {
  EXPECT_EQ(hlm::did_you_mean("bacth", {"batch", "steps", "lr"}), " (did you mean 'batch'?)");
  EXPECT_EQ(hlm::did_you_mean("model", {"batch", "steps"}), "");
}

// The linker's build ID of this test program: 40 hex digits (SHA-1), the same every call, and
// part of the host identity that goes into stage cache keys.
TEST(Util, ReadsTheBuildIdOfTheRunningProgram) {
  const std::string id = hlm::build_id_of("");
  ASSERT_EQ(id.size(), 40u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(hlm::build_id_of(""), id);
  const std::string host = hlm::host_build_identity();
  EXPECT_EQ(host.rfind("hlm=" + id + ";", 0), 0u) << host;
  EXPECT_NE(host.find("libhlm_base.so="), std::string::npos) << host;
}

}  // namespace

namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A file confined to a folder: plain names inside it (there or not yet), whatever the folder
// resolves to; a name that leaves it by '..' or by a symlink is outside; a symlink that stays
// inside is inside.
TEST(Util, TellsWhetherAFileLiesInsideAFolderSymlinksResolved) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("hlm_inside_" + std::to_string(::getpid()));
  fs::create_directories(root / "data");
  fs::create_directories(root / "other");
  std::ofstream(root / "data" / "a.hea") << "a";
  std::ofstream(root / "other" / "o.hea") << "o";
  fs::create_symlink(root / "other" / "o.hea", root / "data" / "out.hea");
  fs::create_symlink(root / "data" / "a.hea", root / "data" / "in.hea");
  fs::create_directory_symlink(root / "data", root / "alias");
  const std::string data = (root / "data").string(), alias = (root / "alias").string();
  EXPECT_TRUE(hlm::is_inside_folder(data, data + "/a.hea"));
  EXPECT_TRUE(hlm::is_inside_folder(data + "/", data + "/a.hea"));
  EXPECT_TRUE(hlm::is_inside_folder(data, data + "/not-yet.hea"));
  EXPECT_TRUE(hlm::is_inside_folder(alias, alias + "/a.hea"));
  EXPECT_TRUE(hlm::is_inside_folder(data, data + "/in.hea"));
  EXPECT_FALSE(hlm::is_inside_folder(data, data + "/out.hea"));
  EXPECT_FALSE(hlm::is_inside_folder(alias, alias + "/out.hea"));
  EXPECT_FALSE(hlm::is_inside_folder(data, data + "/../other/o.hea"));
  EXPECT_FALSE(hlm::is_inside_folder(data, data + "/.."));
  EXPECT_FALSE(hlm::is_inside_folder(data, data + std::string("/..\0", 4)));
  EXPECT_FALSE(hlm::is_inside_folder(data, (root / "other" / "o.hea").string()));
  fs::remove_all(root);
}

// Whole or nothing: a new file replaces the old one, and a writer that fails leaves the old
// file as it was, no .tmp behind, and an error naming the path.
TEST(AtomicFile, ReplacesWholeOrLeavesTheOldFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hlm_atomic_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "f.json").string();
  hlm::write_file_atomic(path, std::string("first"));
  hlm::write_file_atomic(path, std::string("second"));
  EXPECT_EQ(read_all(path), "second");
  try {
    hlm::write_file_atomic(path, [](const std::string& tmp) {
      std::ofstream(tmp) << "half";
      throw std::runtime_error("disk full");
    });
    ADD_FAILURE() << "no error";
  } catch (const hlm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": cannot write (disk full)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_all(path), "second");
  EXPECT_FALSE(hlm::test::temp_file_left(path));
  EXPECT_THROW(hlm::write_file_atomic((dir / "no/such/folder/f").string(), std::string("x")),
               hlm::Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
