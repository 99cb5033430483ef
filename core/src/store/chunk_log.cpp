// ChunkLog and HashingWriter: the file handling behind TokenStoreWriter (see chunk_log.h).
#include "store/chunk_log.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "hlm/errors.h"
#include "hlm/util.h"

namespace hlm::store {
namespace {

uint64_t chunk_checksum(ChunkHeader header, const void* rest, size_t rest_bytes) {
  header.checksum = 0;
  return fnv1a64(rest, rest_bytes, fnv1a64(&header, sizeof(header)));
}

void copy(uint8_t* to, const void* from, size_t bytes) {
  if (bytes > 0) std::memcpy(to, from, bytes);  // from may be null for an empty vector
}

}  // namespace

ChunkLog::ChunkLog(std::string path, uint32_t vocab_size, const std::string& identity,
                   uint32_t descriptor_count, bool resume)
    : path_(std::move(path)), descriptor_count_(descriptor_count) {
  if (!resume || !recover(vocab_size, identity)) start_fresh(vocab_size, identity);
}

ChunkLog::~ChunkLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ChunkLog::start_fresh(uint32_t vocab_size, const std::string& identity) {
  if (fd_ >= 0) ::close(fd_);
  entries_.clear();
  resumed_ = 0;
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw DataError("{}: cannot create: {}", path_, errno_text());
  TmpHeader h{};
  std::memcpy(h.magic, kTmpMagic, sizeof(h.magic));
  h.vocab_size = vocab_size;
  h.identity_bytes = static_cast<uint32_t>(identity.size());
  h.descriptor_count = descriptor_count_;
  pwrite_all(fd_, &h, sizeof(h), 0, path_);
  pwrite_all(fd_, identity.data(), identity.size(), sizeof(h), path_);
  end_ = sizeof(h) + identity.size();
}

bool ChunkLog::recover(uint32_t vocab_size, const std::string& identity) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  TmpHeader h{};
  if (size < sizeof(h) + identity.size()) return false;
  pread_all(fd_, &h, sizeof(h), 0, path_);
  std::string found(h.identity_bytes == identity.size() ? identity.size() : 0, '\0');
  pread_all(fd_, found.data(), found.size(), sizeof(h), path_);
  if (std::memcmp(h.magic, kTmpMagic, sizeof(h.magic)) != 0 || h.vocab_size != vocab_size ||
      h.identity_bytes != identity.size() || found != identity ||
      h.descriptor_count != descriptor_count_) {
    spdlog::warn("{}: made for another tokenizer, vocabulary or hlm version; starting over", path_);
    return false;
  }
  uint64_t pos = sizeof(h) + identity.size();
  const uint64_t bytes_per_beat = chunk_bytes_per_beat(descriptor_count_);
  std::vector<uint8_t> rest;
  std::unordered_set<std::string> names;
  while (pos + sizeof(ChunkHeader) <= size) {
    ChunkHeader c{};
    pread_all(fd_, &c, sizeof(c), pos, path_);
    const uint64_t left = size - pos - sizeof(c);
    if (c.magic != kChunkMagic || c.name_bytes > left ||
        c.beats > (left - c.name_bytes) / bytes_per_beat)
      break;
    rest.resize(c.name_bytes + c.beats * bytes_per_beat);
    pread_all(fd_, rest.data(), rest.size(), pos + sizeof(c), path_);
    if (chunk_checksum(c, rest.data(), rest.size()) != c.checksum) break;
    std::string name(reinterpret_cast<const char*>(rest.data()), c.name_bytes);
    if (!names.insert(name).second) break;
    entries_.push_back({std::move(name), pos + sizeof(c) + c.name_bytes, c.beats});
    pos += sizeof(c) + rest.size();
  }
  if (pos < size) {
    spdlog::warn("{}: dropping {} bytes of an incomplete record", path_, size - pos);
    if (::ftruncate(fd_, static_cast<off_t>(pos)) != 0)
      throw DataError("{}: cannot truncate: {}", path_, errno_text());
  }
  end_ = pos;
  resumed_ = entries_.size();
  if (resumed_ > 0) spdlog::info("{}: resuming with {} records already tokenized", path_, resumed_);
  return true;
}

std::vector<uint8_t> ChunkLog::encode(const Beats& beats, uint32_t descriptor_count) {
  const uint64_t n = beats.tokens.size();
  ChunkHeader c{kChunkMagic, static_cast<uint32_t>(beats.record.size()), n, 0};
  std::vector<uint8_t> chunk(sizeof(c) + beats.record.size() +
                             n * chunk_bytes_per_beat(descriptor_count));
  uint8_t* p = chunk.data() + sizeof(c);
  copy(p, beats.record.data(), beats.record.size());
  p += beats.record.size();
  copy(p, beats.tokens.data(), n * 4);
  copy(p + n * 4, beats.positions.data(), n * 8);
  copy(p + n * 12, beats.rr_seconds.data(), n * 4);
  if (beats.labels.empty())
    std::fill(p + n * 16, p + n * 17, static_cast<uint8_t>(BeatClass::kNone));
  else
    copy(p + n * 16, beats.labels.data(), n);
  copy(p + n * 17, beats.descriptors.data(), n * 4 * uint64_t{descriptor_count});
  c.checksum = chunk_checksum(c, chunk.data() + sizeof(c), chunk.size() - sizeof(c));
  std::memcpy(chunk.data(), &c, sizeof(c));
  return chunk;
}

void ChunkLog::append(const std::vector<uint8_t>& chunk, const std::string& name, uint64_t beats) {
  try {
    pwrite_all(fd_, chunk.data(), chunk.size(), end_, path_);
  } catch (...) {
    // Cut the partial chunk so the next append (or a resume) starts at a clean boundary.
    (void)!::ftruncate(fd_, static_cast<off_t>(end_));
    throw;
  }
  entries_.push_back({name, end_ + sizeof(ChunkHeader) + name.size(), beats});
  end_ += chunk.size();
}

void ChunkLog::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

HashingWriter::HashingWriter(int fd, std::string path, uint64_t offset)
    : fd_(fd), path_(std::move(path)), offset_(offset), hash_(fnv1a64(nullptr, 0)) {
  buffer_.reserve(kBufferBytes);
}

void HashingWriter::write(const void* data, size_t size) {
  hash_ = fnv1a64(data, size, hash_);
  const auto* p = static_cast<const uint8_t*>(data);
  if (buffer_.size() + size > kBufferBytes) flush();
  if (size >= kBufferBytes) {
    pwrite_all(fd_, p, size, offset_, path_);
    offset_ += size;
  } else if (size > 0) {
    buffer_.insert(buffer_.end(), p, p + size);
  }
}

void HashingWriter::pad_to(uint64_t offset) {
  static const uint8_t kZeros[8] = {};
  while (position() < offset) write(kZeros, std::min<uint64_t>(8, offset - position()));
}

void HashingWriter::flush() {
  pwrite_all(fd_, buffer_.data(), buffer_.size(), offset_, path_);
  offset_ += buffer_.size();
  buffer_.clear();
}

}  // namespace hlm::store
