// Hashing and did-you-mean helpers (see hlm/util.h).
#include "hlm/util.h"

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "hlm/errors.h"

namespace hlm {

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

namespace {

// Whether `path` is `folder`/NAME, NAME one plain part (no '/', not . or ..) that is no symlink:
// such a file lies in whatever `folder` resolves to. One lstat, where resolving both paths
// reads every part of each (a dozen system calls per record of a dataset).
bool directly_inside(const std::string& folder, const std::string& path) {
  // The system calls read a path up to its first NUL; such a path takes the full check.
  if (path.find('\0') != std::string::npos) return false;
  size_t f = folder.size();
  while (f > 0 && folder[f - 1] == '/') --f;
  if (f == 0 || path.size() <= f + 1 || path.compare(0, f, folder, 0, f) != 0 || path[f] != '/')
    return false;
  const std::string_view name = std::string_view(path).substr(f + 1);
  if (name.find('/') != std::string_view::npos || name == "." || name == "..") return false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return !S_ISLNK(st.st_mode);
  return errno == ENOENT;  // not there yet: taken as written, inside
}

}  // namespace

bool is_inside_folder(const std::string& folder, const std::string& path) {
  if (directly_inside(folder, path)) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::absolute(folder), ec);
  if (ec) return false;
  if (root.filename().empty()) root = root.parent_path();  // "dir/" of a folder not made yet
  const fs::path target = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) return false;
  auto t = target.begin();
  for (const fs::path& part : root) {
    if (t == target.end() || part != *t) return false;
    ++t;
  }
  return true;
}

void require_text_file(const std::string& path, uintmax_t max_bytes, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return;
  if (!fs::is_regular_file(status))
    throw DataError("{}: not a regular file (a folder, device or pipe); {} is a text file", path,
                    what);
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw DataError("{}: {} bytes, more than the {} MiB {} may hold; is it the right file?", path,
                    size, max_bytes >> 20, what);
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

static size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;  // allow ~1 typo per 3 chars
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(word, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

void reuse_freed_memory() {
  // Blocks up to 256 MiB come from the heap, and up to 1 GiB of free heap stays mapped.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace hlm
