// Whole-record reading: header, every signal group decoded from one memory map in chunks,
// checksums, invalid-sample markers, skew; then the annotations. Also lists a folder's records.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ecg/wfdb_internal.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "hlm/wfdb.h"
#include "util/target_clones.h"

namespace hlm::wfdb {
namespace {

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

struct Group {
  size_t first = 0, count = 0;
  int samples_per_frame = 0;  // all signals of the group together
  int max_skew = 0;
  std::string path;
};

std::vector<Group> signal_groups(const std::string& dir, const Header& h) {
  std::vector<Group> groups;
  for (size_t s = 0; s < h.signals.size(); ++s) {
    const SignalInfo& info = h.signals[s];
    if (groups.empty() || h.signals[s - 1].file_name != info.file_name) {
      const std::string path = join(dir, info.file_name);
      if (!is_inside_folder(dir, path))
        throw DataError(
            "{}: signal {} is in '{}', outside the record's folder {} (symlinks resolved); hlm "
            "reads only signal files inside it",
            h.path, s, info.file_name, dir);
      groups.push_back({s, 0, 0, 0, path});
    }
    Group& g = groups.back();
    ++g.count;
    g.samples_per_frame += info.samples_per_frame;
    g.max_skew = std::max(g.max_skew, info.skew);
  }
  return groups;
}

// Copies one decoded chunk of interleaved frames into the per-signal vectors.
void scatter(const Group& g, const Header& h, const int32_t* flat, int64_t f0, size_t nf,
             std::vector<std::vector<int32_t>>& digital) {
  const size_t ns = g.count;
  if (static_cast<size_t>(g.samples_per_frame) == ns) {  // one sample per signal per frame
    for (size_t k = 0; k < ns; ++k) {
      int32_t* out = digital[g.first + k].data() + f0;
      const int32_t* in = flat + k;
      for (size_t f = 0; f < nf; ++f) out[f] = in[f * ns];
    }
    return;
  }
  std::vector<int32_t*> out(ns);
  std::vector<int> spf(ns);
  for (size_t k = 0; k < ns; ++k) {
    spf[k] = h.signals[g.first + k].samples_per_frame;
    out[k] = digital[g.first + k].data() + f0 * spf[k];
  }
  for (size_t f = 0; f < nf; ++f)
    for (size_t k = 0; k < ns; ++k)
      for (int j = 0; j < spf[k]; ++j) *out[k]++ = *flat++;
}

// Plain loops on their own (the samples could alias a caller's members), which vectorise.
HLM_VECTOR_CLONES
uint32_t sum_of(const int32_t* x, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += uint32_t(x[i]);
  return sum;
}

HLM_VECTOR_CLONES
void mark_invalid(int32_t* x, size_t n, int32_t invalid) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] == invalid ? kInvalidSample : x[i];
}

// What each decoded chunk of a signal goes through while it is still in cache: format 8's
// running sum, the checksum over the record's own samples (not the frames read past its end
// for skew) and the invalid markers.
class SignalFinish {
 public:
  SignalFinish(const SignalInfo& info, size_t own_samples)
      : accumulate_(info.format == 8), acc_(info.initial_value), own_(own_samples) {
    invalid_ = invalid_raw_value(info.format, &has_invalid_);
  }

  // Samples [from, v.size()) of the signal, just scattered.
  void apply(std::vector<int32_t>& v, size_t from) {
    int32_t* x = v.data();
    const size_t to = v.size();
    if (accumulate_) {
      int32_t acc = acc_;
      for (size_t i = from; i < to; ++i) x[i] = acc += x[i];
      acc_ = acc;
    }
    if (from < std::min(to, own_)) sum_ += sum_of(x + from, std::min(to, own_) - from);
    if (has_invalid_) mark_invalid(x + from, to - from, invalid_);
  }

  uint32_t sum() const { return sum_; }

 private:
  bool accumulate_;
  int32_t acc_;
  size_t own_;
  uint32_t sum_ = 0;
  bool has_invalid_ = false;
  int32_t invalid_ = 0;
};

// The checksum check, then the skew dropped and the signal cut (or padded) to the record.
void end_signal(const Header& h, size_t s, const std::string& path, int64_t frames, bool verify,
                uint32_t sum, std::vector<int32_t>& v) {
  const SignalInfo& info = h.signals[s];
  const size_t n = static_cast<size_t>(frames) * info.samples_per_frame;
  if (verify && h.frames > 0 && h.checksum_given[s] && info.checksum != 0 &&
      (sum & 0xFFFFu) != (static_cast<uint32_t>(info.checksum) & 0xFFFFu))
    spdlog::warn(
        "{}: signal {} ({}) checksum mismatch: header {} says {}, the samples sum to {}"
        " (the signal file may be corrupt or the header stale)",
        path, s, info.description, h.path, info.checksum, static_cast<int16_t>(sum & 0xFFFFu));
  if (info.skew > 0) {
    const size_t drop = std::min(v.size(), static_cast<size_t>(info.skew) * info.samples_per_frame);
    v.erase(v.begin(), v.begin() + drop);
  }
  v.resize(n, kInvalidSample);
}

// The byte stream of a group's file after its byte offset, checked to hold `frames` frames.
struct GroupStream {
  MappedFile file;
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

GroupStream open_group(const Header& h, const Group& g, int64_t frames) {
  const SignalInfo& first = h.signals[g.first];
  const int fmt = first.format;
  if (!is_supported_format(fmt))
    throw DataError(
        "{}: signal format {} (FLAC) is not supported (convert the record to format 16 with "
        "WFDB's xform)",
        g.path, fmt);
  GroupStream s{MappedFile(g.path)};
  const uint64_t offset = static_cast<uint64_t>(first.byte_offset);
  s.size = s.file.size() > offset ? s.file.size() - offset : 0;
  const uint64_t spf = static_cast<uint64_t>(g.samples_per_frame);
  // No file holds 2^60 bytes: a larger count is a corrupt header, and would overflow below.
  if (spf > 0 && static_cast<uint64_t>(frames) > (uint64_t(1) << 60) / spf)
    throw DataError("{}: {} frames of {} samples cannot be right (fix the frame count)", h.path,
                    frames, spf);
  const uint64_t need = bytes_for_samples(fmt, static_cast<uint64_t>(frames) * spf);
  if (s.size < need)
    throw DataError(
        "{}: truncated: {} frames of format {} need {} bytes after byte offset {} but the file "
        "holds {} (fetch the file again, or fix the frame count in {})",
        g.path, frames, fmt, need, offset, s.size, h.path);
  // An empty file maps to no memory at all: no offset may be added to it (found by fuzzing a
  // header with no frame count and an offset, naming an empty file).
  s.data = s.size > 0 ? s.file.data() + offset : s.file.data();
  return s;
}

void read_group(const Header& h, const Group& g, int64_t frames, bool verify, Record& r) {
  const int fmt = h.signals[g.first].format;
  if (fmt == 0) {  // a null signal: every sample invalid
    for (size_t k = 0; k < g.count; ++k)
      r.digital[g.first + k].assign(
          static_cast<size_t>(frames) * h.signals[g.first + k].samples_per_frame, kInvalidSample);
    return;
  }
  const GroupStream stream = open_group(h, g, frames);
  const uint64_t spf = static_cast<uint64_t>(g.samples_per_frame);
  // Skewed signals need frames past the record's end, when the file has them.
  const int64_t in_file = static_cast<int64_t>(samples_in_bytes(fmt, stream.size) / spf);
  const int64_t decode_frames = std::min<int64_t>(frames + g.max_skew, in_file);
  std::vector<SignalFinish> finish;
  for (size_t k = 0; k < g.count; ++k) {
    const SignalInfo& info = h.signals[g.first + k];
    finish.emplace_back(info, static_cast<size_t>(frames) * info.samples_per_frame);
    // Reserved only after the file is known to hold the frames: a header's frame count is
    // not trusted to size memory.
    r.digital[g.first + k].reserve(static_cast<size_t>(decode_frames) * info.samples_per_frame);
  }
  // Chunks of 6 * 4096 frames start on a packed-group boundary for every format; each chunk
  // is decoded, scattered and finished while it is in cache.
  constexpr int64_t kChunkFrames = 6 * 4096;
  // MIT-BIH's layout, two signals in format 212, is decoded straight into the signals.
  const bool pairs_212 = fmt == 212 && g.count == 2 && spf == 2;
  std::vector<int32_t> flat(pairs_212 ? 0 : static_cast<size_t>(kChunkFrames * spf));
  for (int64_t f0 = 0; f0 < decode_frames; f0 += kChunkFrames) {
    const size_t nf = static_cast<size_t>(std::min(kChunkFrames, decode_frames - f0));
    for (size_t k = 0; k < g.count; ++k)
      r.digital[g.first + k].resize((f0 + nf) * h.signals[g.first + k].samples_per_frame);
    if (pairs_212) {  // whole groups: the file holds every frame decoded
      decode_212_pairs(stream.data + bytes_for_samples(fmt, static_cast<uint64_t>(f0) * spf), nf,
                       r.digital[g.first].data() + f0, r.digital[g.first + 1].data() + f0);
    } else {
      decode_samples(fmt, stream.data, stream.size, static_cast<uint64_t>(f0) * spf, nf * spf,
                     flat.data());
      scatter(g, h, flat.data(), f0, nf, r.digital);
    }
    for (size_t k = 0; k < g.count; ++k)
      finish[k].apply(r.digital[g.first + k], f0 * h.signals[g.first + k].samples_per_frame);
  }
  for (size_t k = 0; k < g.count; ++k)
    end_signal(h, g.first + k, g.path, frames, verify, finish[k].sum(), r.digital[g.first + k]);
}

void read_signals(const std::string& dir, const Header& h, bool verify, Record& r) {
  const std::vector<Group> groups = signal_groups(dir, h);
  size_t with_files = 0;
  std::vector<const Group*> missing;
  for (const Group& g : groups) {
    if (h.signals[g.first].format == 0) continue;
    ++with_files;
    if (!file_exists(g.path)) missing.push_back(&g);
  }
  if (with_files > 0 && missing.size() == with_files) return;  // annotation-only record
  if (!missing.empty())
    throw DataError(
        "{}: signal file of record {} is missing while its other signal files exist "
        "(fetch the complete record)",
        missing.front()->path, r.name);
  int64_t frames = h.frames;
  if (frames == 0 && with_files > 0) {  // no length in the header: as long as the files allow
    frames = INT64_MAX;
    for (const Group& g : groups) {
      const int fmt = h.signals[g.first].format;
      if (fmt == 0 || !is_supported_format(fmt)) continue;
      const uint64_t size = std::filesystem::file_size(g.path);
      const uint64_t offset = static_cast<uint64_t>(h.signals[g.first].byte_offset);
      const uint64_t avail = size > offset ? size - offset : 0;
      frames = std::min<int64_t>(frames, samples_in_bytes(fmt, avail) / g.samples_per_frame);
    }
    if (frames == INT64_MAX) frames = 0;
  }
  r.frames = frames;
  r.digital.assign(h.signals.size(), {});
  for (const Group& g : groups) read_group(h, g, frames, verify, r);
}

// `annotations` without their rhythm changes, and the rhythm changes of
// base.<rhythm_annotator> in their place, in sample order.
std::vector<Annotation> with_rhythm_of(std::vector<Annotation> annotations, const std::string& base,
                                       const std::string& rhythm_annotator) {
  const std::string path = base + "." + rhythm_annotator;
  if (!file_exists(path))
    throw DataError(
        "{}: missing; the dataset reads each record's rhythm changes from name.{} "
        "(rhythm_annotator): add the file, or leave the record out of the dataset's records",
        path, rhythm_annotator);
  std::vector<Annotation> merged;
  for (Annotation& a : read_annotations(path))
    if (a.code == kRhythmChangeCode) merged.push_back(std::move(a));
  // Without one the record's rhythm is unknown, and every segment of it would be left out of
  // training and scoring without a word.
  if (merged.empty())
    throw DataError(
        "{}: no rhythm change (code 28, '+'); rhythm_annotator '{}' names a file without the "
        "record's rhythm: name the file that has it, or leave the record out",
        path, rhythm_annotator);
  for (Annotation& a : annotations)
    if (a.code != kRhythmChangeCode) merged.push_back(std::move(a));
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Annotation& x, const Annotation& y) { return x.sample < y.sample; });
  return merged;
}

}  // namespace

Record read_record(const std::string& dir, const std::string& name, const ReadOptions& options) {
  const std::string base = join(dir, name);
  if (!is_inside_folder(dir, base + ".hea"))
    throw DataError(
        "{}.hea: outside the dataset's folder {} (symlinks resolved); hlm reads only records "
        "inside it: name the record relative to the folder, without '..'",
        base, dir);
  const Header h = read_header(base + ".hea");
  Record r;
  r.name = name;
  r.source = h.path;
  r.sampling_hz = h.sampling_hz;
  r.counter_hz = h.counter_hz;
  r.frames = h.frames;
  r.signals = h.signals;
  r.comments = h.comments;
  if (options.read_signals && !h.signals.empty()) read_signals(dir, h, options.verify_checksums, r);
  if (!options.annotator.empty()) {
    const std::string path = base + "." + options.annotator;
    if (file_exists(path)) r.annotations = read_annotations(path);
  }
  if (!options.rhythm_annotator.empty())
    r.annotations = with_rhythm_of(std::move(r.annotations), base, options.rhythm_annotator);
  return r;
}

std::optional<std::vector<std::string>> records_file_entries(const std::string& dir) {
  const std::string path = join(dir, "RECORDS");
  require_text_file(path, uintmax_t(16) << 20, "a RECORDS list");
  std::ifstream listing(path);
  if (!listing) return std::nullopt;
  std::vector<std::string> entries;
  for (std::string line; std::getline(listing, line);) {
    const size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos || line[a] == '#') continue;
    entries.push_back(line.substr(a, line.find_last_not_of(" \t\r") - a + 1));
  }
  return entries;
}

std::vector<std::string> header_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".hea")
      names.push_back(e.path().stem().string());
  return names;
}

std::vector<std::string> list_records(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw DataError("{}: not a directory (check the dataset's dir parameter)", dir);
  std::vector<std::string> names;
  if (const auto entries = records_file_entries(dir)) {
    for (const std::string& name : *entries) {
      if (!file_exists(join(dir, name + ".hea"))) continue;
      if (!is_inside_folder(dir, join(dir, name + ".hea")))
        throw DataError(
            "{}: the entry '{}' names a header outside {} (symlinks resolved); hlm reads only "
            "records inside the dataset's folder: remove the entry or copy the record in",
            join(dir, "RECORDS"), name, dir);
      names.push_back(name);
    }
  } else {
    names = header_names(dir);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace hlm::wfdb
