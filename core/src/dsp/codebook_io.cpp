// Codebook files: magic, version, sizes, metadata, float32 centroids, FNV-1a checksum.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "hlm/dsp/kmeans.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "util/atomic_file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "codebook files are little-endian; add byte swapping for this platform"
#endif

namespace hlm::dsp {

namespace {
constexpr char kMagic[8] = {'H', 'L', 'M', 'C', 'B', 'O', 'O', 'K'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 * sizeof(uint32_t);

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
uint32_t get_u32(const std::string& in, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}
[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw CheckpointError(
      "{}: {} (HINT: delete the file to retrain the codebook, or point to another)", path, what);
}
}  // namespace

void save_codebook(const Codebook& codebook, const std::string& path, const std::string& metadata) {
  std::string out(kMagic, sizeof(kMagic));
  put_u32(out, kVersion);
  put_u32(out, static_cast<uint32_t>(codebook.dim));
  put_u32(out, static_cast<uint32_t>(codebook.codes()));
  put_u32(out, static_cast<uint32_t>(metadata.size()));
  out += metadata;
  out.append(reinterpret_cast<const char*>(codebook.centroids.data()),
             codebook.centroids.size() * sizeof(float));
  const uint64_t sum = fnv1a64(out.data(), out.size());
  out.append(reinterpret_cast<const char*>(&sum), sizeof(sum));
  write_file_atomic(path, out);
}

Codebook load_codebook(const std::string& path, std::string* metadata) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open the codebook file");
  const std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (in.size() < kHeaderBytes + sizeof(uint64_t) || std::memcmp(in.data(), kMagic, 8) != 0)
    fail(path, "not a codebook file (no 'HLMCBOOK' magic)");
  const uint32_t version = get_u32(in, 8);
  if (version != kVersion)
    fail(path, "codebook format version " + std::to_string(version) + ", this build reads " +
                   std::to_string(kVersion));
  const uint32_t dim = get_u32(in, 12), codes = get_u32(in, 16), meta = get_u32(in, 20);
  const uint64_t floats = uint64_t(dim) * codes;
  const uint64_t expect = kHeaderBytes + uint64_t(meta) + floats * 4 + sizeof(uint64_t);
  if (in.size() != expect)
    fail(path, "size " + std::to_string(in.size()) + " bytes, expected " + std::to_string(expect) +
                   " for " + std::to_string(codes) + " codes of " + std::to_string(dim) +
                   " (truncated?)");
  uint64_t stored = 0;
  std::memcpy(&stored, in.data() + in.size() - sizeof(stored), sizeof(stored));
  if (fnv1a64(in.data(), in.size() - sizeof(stored)) != stored)
    fail(path, "checksum mismatch (the file is corrupt)");
  Codebook cb;
  cb.dim = static_cast<int>(dim);
  cb.centroids.resize(floats);
  std::memcpy(cb.centroids.data(), in.data() + kHeaderBytes + meta, floats * 4);
  if (metadata) metadata->assign(in.data() + kHeaderBytes, meta);
  return cb;
}

}  // namespace hlm::dsp
