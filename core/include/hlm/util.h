// Small helpers shared by the host and plugins: hashing, did-you-mean suggestions, timing.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace hlm {

// 64-bit FNV-1a: stable across runs and machines, used for cache keys and identities.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ULL);
inline uint64_t fnv1a64(const std::string& s) { return fnv1a64(s.data(), s.size()); }
// 16 lowercase hex digits.
std::string hex64(uint64_t value);

// The candidate closest to `word` by edit distance, or "" when none is close enough.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// Whether `path` lies inside `folder` once both are resolved (symlinks followed, `.` and `..`
// removed; a part that does not exist yet is taken as written). Confines the files an input
// names (a RECORDS entry, a header's signal file) to the folder it was given in.
bool is_inside_folder(const std::string& folder, const std::string& path);

// Throws hlm::DataError naming path unless it is a regular file of at most max_bytes: a
// folder, a device or a pipe read as a text file would never end, and a file far larger than
// its kind ever is (`what`, e.g. "a WFDB header") is the wrong file. A missing file passes
// (the caller's open names it).
void require_text_file(const std::string& path, uintmax_t max_bytes, const std::string& what);

// Seconds since an arbitrary fixed point (monotonic clock).
inline double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Seconds since the Unix epoch (wall clock): comparable between processes.
inline double unix_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Makes the C library keep large freed blocks for reuse instead of handing them back to the
// kernel. Otherwise every record's signal-long buffers arrive as fresh pages, and faulting
// and zeroing them costs more than decoding the record (the read stage of
// `hlm bench tokenize`, docs/benchmarks.md). Peak memory is unchanged; the process keeps its
// high water mark until it exits. Called once at start-up by the hlm binary.
void reuse_freed_memory();

}  // namespace hlm
