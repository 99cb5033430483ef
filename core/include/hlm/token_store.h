// The token store: the binary file the tokenize stage writes and training memory-maps. One flat
// token array for the whole dataset, per-beat side arrays, a record index, and a header with
// magic, format version, vocabulary size, tokenizer identity and checksums.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlm/tokenizer.h"

namespace hlm {

// Version 2 layout, little-endian, every section 8-byte aligned (zero padding):
//   header (128 bytes) | tokenizer identity | tokens (uint16, or uint32 when vocab > 65536)
//   | positions int64 | rr_seconds float32 | labels uint8 (BeatClass)
//   | descriptors float32 (descriptor_count per beat) | index | record names
// One token per beat; record i owns tokens [offset, offset + length) of every per-beat array.
// Version 1 (no descriptors) is read too.
constexpr char kTokenStoreMagic[8] = {'H', 'L', 'M', 'T', 'O', 'K', 'E', 'N'};
constexpr uint32_t kTokenStoreVersion = 2;

// Streams records into `path`. Appended records go to `path + ".tmp"` as self-checking chunks;
// finish() writes the store to `path + ".part"`, fsyncs it and renames it to `path`, so `path`
// is either absent or complete. Records are ordered by name in the store, so the file does not
// depend on the order in which parallel workers appended them. append() is thread-safe.
//
// Resume: when `resume` is true and a `.tmp` from an interrupted run with the same vocabulary
// and tokenizer identity exists, its complete records are kept (has_record() says which) and a
// torn tail is cut off; the caller appends only the missing records. Otherwise it starts empty.
class TokenStoreWriter {
 public:
  // descriptor_count: Beats::descriptors values per beat every appended record carries.
  TokenStoreWriter(std::string path, uint32_t vocab_size, std::string tokenizer_identity,
                   bool resume = true, uint32_t descriptor_count = 0);
  // Without finish() the `.tmp` stays behind for a later resume.
  ~TokenStoreWriter();
  TokenStoreWriter(TokenStoreWriter&&) noexcept;
  TokenStoreWriter& operator=(TokenStoreWriter&&) noexcept;

  // Adds one record: beats.tokens, positions and rr_seconds must have one entry per beat,
  // descriptors descriptor_count per beat; labels may be empty (stored as BeatClass::kNone).
  // Throws DataError for a duplicate or empty record name, mismatched sizes or a token >=
  // vocab_size.
  void append(const Beats& beats);
  bool has_record(const std::string& record) const;
  size_t record_count() const;
  size_t resumed_record_count() const;  // records recovered from an earlier `.tmp`
  uint64_t token_count() const;
  // Writes the store and removes the `.tmp`. No append() after it.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A read-only, memory-mapped token store. Movable, not copyable; pointers stay valid while the
// TokenStore lives.
class TokenStore {
 public:
  struct RecordView {
    std::string name;
    uint64_t offset = 0;  // first beat in the per-beat arrays
    uint64_t length = 0;  // number of beats
  };

  // Maps and validates the file: magic, version, sizes and, when verify_checksum, the payload
  // checksum (a full read of the file). Throws DataError naming the file on any mismatch.
  static TokenStore open(const std::string& path, bool verify_checksum = true);
  ~TokenStore();
  TokenStore(TokenStore&&) noexcept;
  TokenStore& operator=(TokenStore&&) noexcept;
  TokenStore(const TokenStore&) = delete;
  TokenStore& operator=(const TokenStore&) = delete;

  const std::string& path() const { return path_; }
  uint32_t vocab_size() const { return vocab_size_; }
  const std::string& tokenizer_identity() const { return identity_; }
  // Throws DataError naming both identities when the store was made by another tokenizer.
  void expect_tokenizer(const std::string& identity) const;

  size_t record_count() const { return record_count_; }
  RecordView record(size_t i) const;
  // Index of the record with this name, or record_count() when there is none.
  size_t find_record(const std::string& name) const;

  size_t token_count() const { return token_count_; }
  uint32_t token_bytes() const { return token_bytes_; }  // 2 or 4
  uint32_t token(uint64_t i) const { return token_bytes_ == 2 ? tokens_u16()[i] : tokens_u32()[i]; }
  const uint16_t* tokens_u16() const;  // nullptr unless token_bytes() == 2
  const uint32_t* tokens_u32() const;  // nullptr unless token_bytes() == 4
  const int64_t* positions() const;
  const float* rr_seconds() const;
  const uint8_t* labels() const;  // BeatClass values
  // Values per beat of descriptors() (0 when the tokenizer gave none).
  uint32_t descriptor_count() const { return descriptor_count_; }
  // descriptor_count() values per beat, beat-major; nullptr when there are none.
  const float* descriptors() const;

  // Copies tokens [start, start + n) into out, widened to int64 (a training window).
  // Throws InternalError when the window runs past token_count().
  void copy_window(uint64_t start, size_t n, int64_t* out) const;

 private:
  TokenStore() = default;
  void release();

  std::string path_;
  std::string identity_;
  const uint8_t* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  uint32_t vocab_size_ = 0;
  uint32_t token_bytes_ = 2;
  uint32_t descriptor_count_ = 0;
  size_t record_count_ = 0;
  size_t token_count_ = 0;
  uint64_t tokens_offset_ = 0, positions_offset_ = 0, rr_offset_ = 0, labels_offset_ = 0;
  uint64_t descriptors_offset_ = 0;
  uint64_t index_offset_ = 0, names_offset_ = 0, names_bytes_ = 0;
};

}  // namespace hlm
