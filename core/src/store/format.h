// On-disk structures of the token store (hlm/token_store.h) and of the writer's `.tmp` chunk
// log, plus the few POSIX I/O helpers both sides share. Private to core.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace hlm::store {

// The structs are written as raw bytes, which is the little-endian format on every host we
// build for; a big-endian port would have to byte-swap here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "token store assumes little-endian");

// Store header, version 2. Fields are only ever appended (header_bytes grows), so a reader
// can at least report the version of a newer file. Version 1 is version 2 without descriptors
// (its descriptor_count, then a reserved field, is 0 and the section is empty), so both read
// alike.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // this struct + identity, padded to 8: where the tokens start
  uint32_t vocab_size;
  uint32_t token_bytes;  // 2 or 4
  uint64_t record_count;
  uint64_t token_count;
  uint64_t file_bytes;
  uint64_t tokens_offset;
  uint64_t positions_offset;
  uint64_t rr_offset;
  uint64_t labels_offset;
  uint64_t index_offset;
  uint64_t names_offset;
  uint64_t names_bytes;
  uint32_t identity_bytes;    // identity follows the struct
  uint32_t descriptor_count;  // float32 descriptors per beat (hlm/tokenizer.h's Beats)
  uint64_t payload_checksum;  // fnv1a64 of bytes [header_bytes, file_bytes)
  uint64_t header_checksum;   // fnv1a64 of the struct (this field zero) and the identity
};
static_assert(sizeof(FileHeader) == 128, "FileHeader layout is part of the format");

struct IndexEntry {
  uint64_t offset;       // first beat
  uint64_t length;       // beats
  uint64_t name_offset;  // into the names section
  uint64_t name_bytes;
};
static_assert(sizeof(IndexEntry) == 32, "IndexEntry layout is part of the format");

// `.tmp` file: TmpHeader, identity, then one chunk per appended record. Tokens are kept as
// uint32 there and narrowed by finish().
constexpr char kTmpMagic[8] = {'H', 'L', 'M', 'T', 'M', 'P', '0', '2'};
struct TmpHeader {
  char magic[8];
  uint32_t vocab_size;
  uint32_t identity_bytes;
  uint32_t descriptor_count;
  uint32_t reserved;
};
constexpr uint32_t kChunkMagic = 0x4b4e4843;  // "CHNK"
struct ChunkHeader {
  uint32_t magic;
  uint32_t name_bytes;
  uint64_t beats;
  uint64_t checksum;  // fnv1a64 of name + body, seeded with the other fields
};
// Chunk body after the name: tokens u32[beats], positions i64[beats], rr f32[beats],
// labels u8[beats], descriptors f32[beats * descriptor_count].
constexpr uint64_t kChunkBytesPerBeat = 4 + 8 + 4 + 1;
inline uint64_t chunk_bytes_per_beat(uint32_t descriptor_count) {
  return kChunkBytesPerBeat + 4 * uint64_t{descriptor_count};
}

inline uint64_t align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Section offsets follow from the counts alone; the writer lays the file out with this and the
// reader checks the header against it, which bounds every section by file_bytes.
// Without descriptors the layout is version 1's.
struct Layout {
  uint64_t header_bytes, tokens_offset, positions_offset, rr_offset, labels_offset;
  uint64_t descriptors_offset, index_offset, names_offset, file_bytes;
};
inline Layout compute_layout(uint64_t identity_bytes, uint64_t token_bytes, uint64_t tokens,
                             uint64_t records, uint64_t names_bytes, uint64_t descriptor_count) {
  Layout l{};
  l.header_bytes = align8(sizeof(FileHeader) + identity_bytes);
  l.tokens_offset = l.header_bytes;
  l.positions_offset = align8(l.tokens_offset + tokens * token_bytes);
  l.rr_offset = l.positions_offset + tokens * 8;
  l.labels_offset = align8(l.rr_offset + tokens * 4);
  l.descriptors_offset = align8(l.labels_offset + tokens);
  l.index_offset = align8(l.descriptors_offset + tokens * descriptor_count * 4);
  l.names_offset = l.index_offset + records * sizeof(IndexEntry);
  l.file_bytes = align8(l.names_offset + names_bytes);
  return l;
}

// Loop until everything is written / read; throw DataError naming `path` on failure.
void pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& path);
void pread_all(int fd, void* data, size_t size, uint64_t offset, const std::string& path);
// fsync of the folder holding `path`, so a rename in it survives a power loss.
void fsync_parent_dir(const std::string& path);
std::string errno_text();

}  // namespace hlm::store
