// The writer's `.tmp` file: a log of self-checking record chunks. A crash leaves at worst a
// torn last chunk, which reopening cuts off, so tokenizing resumes per record.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/tokenizer.h"
#include "store/format.h"

namespace hlm::store {

struct ChunkEntry {
  std::string name;
  uint64_t body_offset = 0;  // where the chunk's tokens start in the log
  uint64_t beats = 0;
};

class ChunkLog {
 public:
  // Opens `path`. With `resume`, keeps the complete chunks of an earlier log written for the
  // same vocabulary, identity and descriptor count; otherwise (or when it does not match)
  // starts empty.
  ChunkLog(std::string path, uint32_t vocab_size, const std::string& identity,
           uint32_t descriptor_count, bool resume);
  ~ChunkLog();
  ChunkLog(const ChunkLog&) = delete;
  ChunkLog& operator=(const ChunkLog&) = delete;

  // Header, name and body of one chunk (tokens kept as uint32; labels default to kNone), with
  // descriptor_count descriptors per beat (the caller checked beats.descriptors' size).
  static std::vector<uint8_t> encode(const Beats& beats, uint32_t descriptor_count);
  // Appends an encoded chunk. On a failed write the log is cut back to its last whole chunk.
  void append(const std::vector<uint8_t>& chunk, const std::string& name, uint64_t beats);
  const std::vector<ChunkEntry>& entries() const { return entries_; }
  size_t resumed() const { return resumed_; }
  const std::string& path() const { return path_; }

  // Reads one per-beat field (at field_offset_per_beat * beats into each body) of the entries
  // in `order`, in pieces, calling out(data, beats_in_piece).
  template <typename Fn>
  void for_each_field(const std::vector<size_t>& order, uint64_t field_offset_per_beat,
                      size_t elem_bytes, Fn&& out) const {
    constexpr uint64_t kBeatsPerRead = 1 << 16;
    std::vector<uint8_t> buffer(kBeatsPerRead * elem_bytes);
    for (const size_t i : order) {
      const ChunkEntry& e = entries_[i];
      const uint64_t field = e.body_offset + field_offset_per_beat * e.beats;
      for (uint64_t done = 0; done < e.beats; done += kBeatsPerRead) {
        const uint64_t n = std::min(kBeatsPerRead, e.beats - done);
        pread_all(fd_, buffer.data(), n * elem_bytes, field + done * elem_bytes, path_);
        out(buffer.data(), n);
      }
    }
  }

  // Closes and deletes the log (after the store it fed is safely in place).
  void remove();

 private:
  bool recover(uint32_t vocab_size, const std::string& identity);
  void start_fresh(uint32_t vocab_size, const std::string& identity);

  std::string path_;
  uint32_t descriptor_count_ = 0;
  int fd_ = -1;
  uint64_t end_ = 0;  // bytes of whole chunks
  std::vector<ChunkEntry> entries_;
  size_t resumed_ = 0;
};

// Writes sequentially through a buffer and hashes what it writes (fnv1a64), so the store's
// payload checksum costs no second pass.
class HashingWriter {
 public:
  HashingWriter(int fd, std::string path, uint64_t offset);
  void write(const void* data, size_t size);
  void pad_to(uint64_t offset);  // zero bytes up to `offset`
  void flush();
  uint64_t position() const { return offset_ + buffer_.size(); }
  uint64_t hash() const { return hash_; }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;
  int fd_;
  std::string path_;
  uint64_t offset_;
  uint64_t hash_;
  std::vector<uint8_t> buffer_;
};

}  // namespace hlm::store
