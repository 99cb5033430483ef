// TokenStoreWriter: validates records, logs them to `path.tmp` (store::ChunkLog), and on
// finish() lays out the store in `path.part`, fsyncs it and renames it to `path`.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <unordered_set>

#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "hlm/util.h"
#include "store/chunk_log.h"

namespace hlm {

struct TokenStoreWriter::Impl {
  std::string path;
  uint32_t vocab_size = 0;
  uint32_t descriptor_count = 0;
  std::string identity;
  std::unique_ptr<store::ChunkLog> log;
  std::unordered_set<std::string> names;
  uint64_t tokens = 0;
  bool finished = false;
  mutable std::mutex mutex;

  void write_store(const std::string& part);
};

TokenStoreWriter::TokenStoreWriter(std::string path, uint32_t vocab_size,
                                   std::string tokenizer_identity, bool resume,
                                   uint32_t descriptor_count)
    : impl_(std::make_unique<Impl>()) {
  if (vocab_size == 0) throw InternalError("{}: token store vocab_size must be > 0", path);
  impl_->path = std::move(path);
  impl_->vocab_size = vocab_size;
  impl_->descriptor_count = descriptor_count;
  impl_->identity = std::move(tokenizer_identity);
  impl_->log = std::make_unique<store::ChunkLog>(impl_->path + ".tmp", vocab_size, impl_->identity,
                                                 descriptor_count, resume);
  for (const store::ChunkEntry& e : impl_->log->entries()) {
    impl_->names.insert(e.name);
    impl_->tokens += e.beats;
  }
}

TokenStoreWriter::~TokenStoreWriter() = default;
TokenStoreWriter::TokenStoreWriter(TokenStoreWriter&&) noexcept = default;
TokenStoreWriter& TokenStoreWriter::operator=(TokenStoreWriter&&) noexcept = default;

void TokenStoreWriter::append(const Beats& beats) {
  const std::string& where = impl_->path;
  const size_t n = beats.tokens.size();
  if (beats.record.empty()) throw DataError("{}: a record without a name cannot be stored", where);
  if (beats.positions.size() != n || beats.rr_seconds.size() != n ||
      (!beats.labels.empty() && beats.labels.size() != n))
    throw DataError(
        "{}: record '{}' has {} tokens but {} positions, {} RR intervals and {} labels; "
        "they must match",
        where, beats.record, n, beats.positions.size(), beats.rr_seconds.size(),
        beats.labels.size());
  if (beats.descriptors.size() != n * impl_->descriptor_count)
    throw DataError(
        "{}: record '{}' has {} descriptor values for {} beats; the store takes {} "
        "per beat",
        where, beats.record, beats.descriptors.size(), n, impl_->descriptor_count);
  for (size_t i = 0; i < n; ++i)
    if (beats.tokens[i] >= impl_->vocab_size)
      throw DataError("{}: record '{}' beat {} has token {} >= vocab_size {}", where, beats.record,
                      i, beats.tokens[i], impl_->vocab_size);
  // Encoded outside the lock: parallel workers only serialise on the write itself.
  const std::vector<uint8_t> chunk = store::ChunkLog::encode(beats, impl_->descriptor_count);

  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->finished) throw InternalError("{}: append() after finish()", where);
  if (impl_->names.count(beats.record))
    throw DataError("{}: record '{}' was already appended", where, beats.record);
  impl_->log->append(chunk, beats.record, n);
  impl_->names.insert(beats.record);
  impl_->tokens += n;
}

bool TokenStoreWriter::has_record(const std::string& record) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->names.count(record) > 0;
}

size_t TokenStoreWriter::record_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->names.size();
}

size_t TokenStoreWriter::resumed_record_count() const { return impl_->log->resumed(); }

uint64_t TokenStoreWriter::token_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->tokens;
}

void TokenStoreWriter::finish() {
  Impl& w = *impl_;
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.finished) throw InternalError("{}: finish() called twice", w.path);
  const std::string part = w.path + ".part";
  w.write_store(part);
  if (::rename(part.c_str(), w.path.c_str()) != 0)
    throw DataError("{}: cannot rename to {}: {}", part, w.path, store::errno_text());
  store::fsync_parent_dir(w.path);
  w.log->remove();
  w.finished = true;
}

void TokenStoreWriter::Impl::write_store(const std::string& part) {
  const std::vector<store::ChunkEntry>& entries = log->entries();
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return entries[a].name < entries[b].name; });
  uint64_t names_bytes = 0;
  for (const store::ChunkEntry& e : entries) names_bytes += e.name.size();
  // Tokens are < vocab_size, so uint16 holds every vocabulary of up to 65536 entries.
  const uint32_t token_bytes = vocab_size > 65536 ? 4 : 2;
  const store::Layout l = store::compute_layout(identity.size(), token_bytes, tokens,
                                                entries.size(), names_bytes, descriptor_count);

  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw DataError("{}: cannot create: {}", part, store::errno_text());
  try {
    store::HashingWriter out(fd, part, l.tokens_offset);
    std::vector<uint16_t> narrow;
    log->for_each_field(order, 0, 4, [&](const uint8_t* data, uint64_t n) {
      if (token_bytes == 4) return out.write(data, n * 4);
      narrow.resize(n);
      const auto* wide = reinterpret_cast<const uint32_t*>(data);
      for (uint64_t i = 0; i < n; ++i) narrow[i] = static_cast<uint16_t>(wide[i]);
      out.write(narrow.data(), n * 2);
    });
    out.pad_to(l.positions_offset);
    log->for_each_field(order, 4, 8, [&](const uint8_t* d, uint64_t n) { out.write(d, n * 8); });
    log->for_each_field(order, 12, 4, [&](const uint8_t* d, uint64_t n) { out.write(d, n * 4); });
    out.pad_to(l.labels_offset);
    log->for_each_field(order, 16, 1, [&](const uint8_t* d, uint64_t n) { out.write(d, n); });
    out.pad_to(l.descriptors_offset);
    if (descriptor_count > 0)
      log->for_each_field(order, 17, 4 * descriptor_count, [&](const uint8_t* d, uint64_t n) {
        out.write(d, n * 4 * descriptor_count);
      });
    out.pad_to(l.index_offset);
    uint64_t offset = 0, name_offset = 0;
    for (const size_t i : order) {
      const store::IndexEntry ie{offset, entries[i].beats, name_offset, entries[i].name.size()};
      out.write(&ie, sizeof(ie));
      offset += entries[i].beats;
      name_offset += entries[i].name.size();
    }
    for (const size_t i : order) out.write(entries[i].name.data(), entries[i].name.size());
    out.pad_to(l.file_bytes);
    out.flush();

    store::FileHeader h{};
    std::memcpy(h.magic, kTokenStoreMagic, sizeof(h.magic));
    h.version = kTokenStoreVersion;
    h.header_bytes = static_cast<uint32_t>(l.header_bytes);
    h.vocab_size = vocab_size;
    h.token_bytes = token_bytes;
    h.record_count = entries.size();
    h.token_count = tokens;
    h.file_bytes = l.file_bytes;
    h.tokens_offset = l.tokens_offset;
    h.positions_offset = l.positions_offset;
    h.rr_offset = l.rr_offset;
    h.labels_offset = l.labels_offset;
    h.index_offset = l.index_offset;
    h.names_offset = l.names_offset;
    h.names_bytes = names_bytes;
    h.identity_bytes = static_cast<uint32_t>(identity.size());
    h.descriptor_count = descriptor_count;
    h.payload_checksum = out.hash();
    // The header checksum covers the struct (with itself zero), the identity and padding.
    std::vector<uint8_t> head(l.header_bytes, 0);
    if (!identity.empty()) std::memcpy(head.data() + sizeof(h), identity.data(), identity.size());
    std::memcpy(head.data(), &h, sizeof(h));
    h.header_checksum = fnv1a64(head.data(), head.size());
    std::memcpy(head.data(), &h, sizeof(h));
    store::pwrite_all(fd, head.data(), head.size(), 0, part);
    if (::fsync(fd) != 0) throw DataError("{}: fsync failed: {}", part, store::errno_text());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace hlm
