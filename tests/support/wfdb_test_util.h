// Helpers for the WFDB reader tests: where the PhysioNet data lives, reading the WFDB
// package's text dumps (plain or .gz), and scratch folders for synthetic or corrupted records.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hlm::test {

// de Chazal 2004's DS1: the MIT-BIH inter-patient protocol's training records.
inline constexpr const char* kDs1Records[] = {
    "101", "106", "108", "109", "112", "114", "115", "116", "118", "119", "122",
    "124", "201", "203", "205", "207", "208", "209", "215", "220", "223", "230"};

inline std::string data_path(const std::string& relative) {
  return std::string(HLM_TEST_DATA_DIR) + "/" + relative;
}

// Skips the current test when a folder of ../shared/data is absent (a fresh clone has none).
#define HLM_REQUIRE_DATA(folder)                                           \
  if (!std::filesystem::is_directory(hlm::test::data_path(folder)))        \
  GTEST_SKIP() << "PhysioNet data folder " << hlm::test::data_path(folder) \
               << " is absent (see shared/data/README.md)"

// Whitespace-separated tokens of each non-empty line; zlib reads plain and `.gz` files alike.
inline std::vector<std::vector<std::string>> read_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return rows;
  char line[4096];
  while (gzgets(f, line, sizeof(line))) {
    std::istringstream in(line);
    std::vector<std::string> row;
    for (std::string t; in >> t;) row.push_back(t);
    if (!row.empty()) rows.push_back(std::move(row));
  }
  gzclose(f);
  return rows;
}

// Tab-separated cells of each line (for .tsv tables with a header row).
inline std::vector<std::vector<std::string>> read_tsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, '\t');) row.push_back(c);
    if (!row.empty()) rows.push_back(std::move(row));
  }
  return rows;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hlm_wfdb_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace hlm::test
