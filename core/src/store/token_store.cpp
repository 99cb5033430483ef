// TokenStore: maps a token store read-only and checks it before anyone trusts an offset in it.
#include "hlm/token_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "store/format.h"

namespace hlm {
namespace {

const char* kRerunHint = "; delete it and re-run the tokenize stage";

std::string printable(const char* bytes, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (bytes[i] >= 32 && bytes[i] < 127) ? bytes[i] : '?';
  return s;
}

}  // namespace

namespace {

// The whole file mapped read-only; a file too short for a header is refused, told apart from a
// foreign one by its magic.
const uint8_t* map_store(const std::string& path, uint64_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("{}: cannot open token store: {}", path, store::errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw DataError("{}: cannot stat token store: {}", path, store::errno_text());
  }
  *size = static_cast<uint64_t>(st.st_size);
  if (*size < sizeof(store::FileHeader)) {
    char head[8] = {};
    const bool has_magic = *size >= sizeof(head) && ::pread(fd, head, sizeof(head), 0) == 8;
    ::close(fd);
    if (!has_magic || std::memcmp(head, kTokenStoreMagic, 8) != 0)
      throw DataError("{}: not a token store ({} bytes){}", path, *size, kRerunHint);
    throw DataError("{}: truncated token store ({} bytes, smaller than its header){}", path, *size,
                    kRerunHint);
  }
  void* map = ::mmap(nullptr, *size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED)
    throw DataError("{}: cannot map token store: {}", path, store::errno_text());
  return static_cast<const uint8_t*>(map);
}

// The header's magic, version, own checksum and file size.
void check_header(const std::string& path, const store::FileHeader& h, const uint8_t* base,
                  uint64_t size) {
  if (std::memcmp(h.magic, kTokenStoreMagic, sizeof(h.magic)) != 0)
    throw DataError("{}: not a token store (magic '{}', expected '{}')", path,
                    printable(h.magic, 8), printable(kTokenStoreMagic, 8));
  if (h.version != kTokenStoreVersion && h.version != 1)
    throw DataError(
        "{}: token store format version {} is not supported (this hlm reads versions 1 to {}); "
        "re-run the tokenize stage with this hlm build",
        path, h.version, kTokenStoreVersion);
  const uint64_t header_bytes = store::align8(sizeof(h) + uint64_t{h.identity_bytes});
  if (h.header_bytes != header_bytes || header_bytes > size)
    throw DataError("{}: truncated or corrupt token store header ({} bytes){}", path, size,
                    kRerunHint);
  std::vector<uint8_t> head(base, base + header_bytes);
  std::memset(head.data() + offsetof(store::FileHeader, header_checksum), 0, 8);
  if (fnv1a64(head.data(), head.size()) != h.header_checksum)
    throw DataError("{}: token store header checksum mismatch: the file is corrupt{}", path,
                    kRerunHint);
  if (size != h.file_bytes)
    throw DataError("{}: token store is {} bytes but its header says {}{}{}", path, size,
                    h.file_bytes, (size < h.file_bytes ? " (truncated)" : ""), kRerunHint);
}

// The sections' layout as the header's counts make it, refused unless it is the header's.
store::Layout checked_layout(const std::string& path, const store::FileHeader& h, uint64_t size) {
  // Counts bounded by the file size first, so the layout arithmetic cannot overflow.
  // Version 1 wrote 0 where the descriptor count now is.
  const bool counts_fit =
      h.token_count <= size / 15 && h.record_count <= size / 32 && h.names_bytes <= size &&
      h.descriptor_count <= size / 4 && (h.version > 1 || h.descriptor_count == 0) &&
      (h.descriptor_count == 0 || h.token_count <= size / 4 / h.descriptor_count);
  const store::Layout l =
      store::compute_layout(h.identity_bytes, h.token_bytes, h.token_count, h.record_count,
                            h.names_bytes, counts_fit ? h.descriptor_count : 0);
  const bool layout_ok = counts_fit && (h.token_bytes == 2 || h.token_bytes == 4) &&
                         l.file_bytes == h.file_bytes && l.tokens_offset == h.tokens_offset &&
                         l.positions_offset == h.positions_offset && l.rr_offset == h.rr_offset &&
                         l.labels_offset == h.labels_offset && l.index_offset == h.index_offset &&
                         l.names_offset == h.names_offset &&
                         (h.token_bytes == 4 || h.vocab_size <= 65536);
  if (!layout_ok)
    throw DataError("{}: token store sections do not match its header: the file is corrupt{}", path,
                    kRerunHint);
  return l;
}

}  // namespace

TokenStore TokenStore::open(const std::string& path, bool verify_checksum) {
  TokenStore s;
  s.path_ = path;
  uint64_t size = 0;
  s.base_ = map_store(path, &size);
  s.mapped_bytes_ = size;
  store::FileHeader h{};
  std::memcpy(&h, s.base_, sizeof(h));
  check_header(path, h, s.base_, size);
  const store::Layout l = checked_layout(path, h, size);
  const uint64_t header_bytes = h.header_bytes;
  if (verify_checksum) {
    const uint64_t sum = fnv1a64(s.base_ + header_bytes, size - header_bytes);
    if (sum != h.payload_checksum)
      throw DataError(
          "{}: token store checksum mismatch (stored {}, computed {}): the file is corrupt{}", path,
          hex64(h.payload_checksum), hex64(sum), kRerunHint);
  }

  s.identity_.assign(reinterpret_cast<const char*>(s.base_ + sizeof(h)), h.identity_bytes);
  s.vocab_size_ = h.vocab_size;
  s.token_bytes_ = h.token_bytes;
  s.record_count_ = h.record_count;
  s.token_count_ = h.token_count;
  s.tokens_offset_ = h.tokens_offset;
  s.positions_offset_ = h.positions_offset;
  s.rr_offset_ = h.rr_offset;
  s.labels_offset_ = h.labels_offset;
  s.descriptor_count_ = h.descriptor_count;
  s.descriptors_offset_ = l.descriptors_offset;
  s.index_offset_ = h.index_offset;
  s.names_offset_ = h.names_offset;
  s.names_bytes_ = h.names_bytes;
  // Checked once here so record() can trust the index even when the checksum was skipped.
  const auto* index = reinterpret_cast<const store::IndexEntry*>(s.base_ + s.index_offset_);
  for (size_t i = 0; i < s.record_count_; ++i) {
    const store::IndexEntry& e = index[i];
    if (e.offset > s.token_count_ || e.length > s.token_count_ - e.offset ||
        e.name_offset > s.names_bytes_ || e.name_bytes > s.names_bytes_ - e.name_offset)
      throw DataError(
          "{}: token store index entry {} points outside the file: the file is corrupt{}", path, i,
          kRerunHint);
  }
  return s;
}

TokenStore::~TokenStore() { release(); }

void TokenStore::release() {
  if (base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
}

TokenStore::TokenStore(TokenStore&& other) noexcept { *this = std::move(other); }

TokenStore& TokenStore::operator=(TokenStore&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    identity_ = std::move(other.identity_);
    base_ = std::exchange(other.base_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    vocab_size_ = other.vocab_size_;
    token_bytes_ = other.token_bytes_;
    record_count_ = std::exchange(other.record_count_, 0);
    token_count_ = std::exchange(other.token_count_, 0);
    tokens_offset_ = other.tokens_offset_;
    positions_offset_ = other.positions_offset_;
    rr_offset_ = other.rr_offset_;
    labels_offset_ = other.labels_offset_;
    descriptor_count_ = other.descriptor_count_;
    descriptors_offset_ = other.descriptors_offset_;
    index_offset_ = other.index_offset_;
    names_offset_ = other.names_offset_;
    names_bytes_ = other.names_bytes_;
  }
  return *this;
}

void TokenStore::expect_tokenizer(const std::string& identity) const {
  if (identity != identity_)
    throw DataError(
        "{}: made by tokenizer '{}', but this stage uses '{}'; "
        "re-run the tokenize stage with this tokenizer or use its parameters",
        path_, identity_, identity);
}

TokenStore::RecordView TokenStore::record(size_t i) const {
  if (i >= record_count_)
    throw InternalError("{}: record {} requested, store has {}", path_, i, record_count_);
  const auto* e = reinterpret_cast<const store::IndexEntry*>(base_ + index_offset_) + i;
  RecordView v;
  v.name.assign(reinterpret_cast<const char*>(base_ + names_offset_ + e->name_offset),
                e->name_bytes);
  v.offset = e->offset;
  v.length = e->length;
  return v;
}

size_t TokenStore::find_record(const std::string& name) const {
  const auto* index = reinterpret_cast<const store::IndexEntry*>(base_ + index_offset_);
  const auto* names = reinterpret_cast<const char*>(base_ + names_offset_);
  for (size_t i = 0; i < record_count_; ++i)
    if (index[i].name_bytes == name.size() &&
        std::memcmp(names + index[i].name_offset, name.data(), name.size()) == 0)
      return i;
  return record_count_;
}

const uint16_t* TokenStore::tokens_u16() const {
  return token_bytes_ == 2 ? reinterpret_cast<const uint16_t*>(base_ + tokens_offset_) : nullptr;
}
const uint32_t* TokenStore::tokens_u32() const {
  return token_bytes_ == 4 ? reinterpret_cast<const uint32_t*>(base_ + tokens_offset_) : nullptr;
}
const int64_t* TokenStore::positions() const {
  return reinterpret_cast<const int64_t*>(base_ + positions_offset_);
}
const float* TokenStore::rr_seconds() const {
  return reinterpret_cast<const float*>(base_ + rr_offset_);
}
const uint8_t* TokenStore::labels() const { return base_ + labels_offset_; }
const float* TokenStore::descriptors() const {
  return descriptor_count_ > 0 ? reinterpret_cast<const float*>(base_ + descriptors_offset_)
                               : nullptr;
}

void TokenStore::copy_window(uint64_t start, size_t n, int64_t* out) const {
  if (start > token_count_ || n > token_count_ - start)
    throw InternalError("{}: token window [{}, {}) runs past the end ({} tokens)", path_, start,
                        start + n, token_count_);
  if (token_bytes_ == 2) {
    const uint16_t* t = tokens_u16() + start;
    for (size_t i = 0; i < n; ++i) out[i] = t[i];
  } else {
    const uint32_t* t = tokens_u32() + start;
    for (size_t i = 0; i < n; ++i) out[i] = t[i];
  }
}

}  // namespace hlm
