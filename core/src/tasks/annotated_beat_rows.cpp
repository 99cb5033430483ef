// Annotated beats of other patients as rows for the beat trees (see annotated_beat_rows.h).
#include "tasks/annotated_beat_rows.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "hlm/dsp/rr_features.h"
#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "hlm/wfdb.h"
#include "util/parallel.h"

namespace hlm {

namespace {

namespace fs = std::filesystem;

// One record's beats: time in seconds and AAMI class (kNone for beats no class names).
struct RecordBeats {
  std::vector<double> seconds;
  std::vector<BeatClass> classes;
};

// The records of a source: those named, or every header with an annotation file beside it.
std::vector<std::string> records_of(const AnnotatedBeatSource& source) {
  if (!fs::is_directory(source.dir))
    throw DataError(
        "trees_annotated_beats: {} is not a folder (HINT: give a folder of WFDB headers and "
        "annotation files, such as ltafdb, or none: trees_annotated_beats: [])",
        source.dir);
  if (!source.records.empty()) return source.records;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(source.dir)) {
    const fs::path path = entry.path();
    if (path.extension() != ".hea") continue;
    fs::path annotations = path;
    if (fs::exists(annotations.replace_extension(source.annotator)))
      names.push_back(path.stem().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw DataError(
        "trees_annotated_beats: {} holds no record with a header and a .{} file (HINT: check "
        "the folder and the source's annotator)",
        source.dir, source.annotator);
  return names;
}

// DataError naming a record's header or annotation file when it is missing.
void expect_record_files(const AnnotatedBeatSource& source, const std::string& record) {
  const std::string stem = (fs::path(source.dir) / record).string();
  for (const std::string& file : {stem + ".hea", stem + "." + source.annotator})
    if (!fs::exists(file))
      throw DataError("trees_annotated_beats: {} is missing (HINT: check the source's records)",
                      file);
}

RecordBeats read_beats(const AnnotatedBeatSource& source, const std::string& record) {
  expect_record_files(source, record);
  const std::string stem = (fs::path(source.dir) / record).string();
  const std::string annotations = stem + "." + source.annotator;
  const double hz = wfdb::read_header(stem + ".hea").sampling_hz;
  RecordBeats beats;
  for (const Annotation& a : wfdb::read_annotations(annotations)) {
    if (!is_beat_code(a.code)) continue;
    beats.seconds.push_back(double(a.sample) / hz);
    beats.classes.push_back(aami_class(a.code));
  }
  return beats;
}

// A family of RR columns: its names, and the function that computes them per beat.
struct RrFamily {
  const char* const* names;
  int count;
  std::vector<float> (*compute)(const float*, size_t);
};
constexpr std::array<RrFamily, 4> kRrFamilies = {{
    {kRrFeatureNames, kRrFeatureCount, rr_features},
    {kRecordRhythmFeatureNames, kRecordRhythmFeatureCount, record_rhythm_features},
    {kRhythmContextFeatureNames, kRhythmContextFeatureCount, rhythm_context_features},
    {kRrWithinContextNames, kRrWithinContextCount, rr_within_context},
}};

// Where each family's values go among `names`: column per value, -1 where the trees do not
// read it.
using Placement = std::array<std::vector<int>, kRrFamilies.size()>;
Placement place_families(const std::vector<std::string>& names) {
  Placement placement;
  for (size_t f = 0; f < kRrFamilies.size(); ++f)
    for (int j = 0; j < kRrFamilies[f].count; ++j) {
      const auto it = std::find(names.begin(), names.end(), kRrFamilies[f].names[j]);
      placement[f].push_back(it == names.end() ? -1 : int(it - names.begin()));
    }
  return placement;
}

bool places_any(const std::vector<int>& columns) {
  return std::any_of(columns.begin(), columns.end(), [](int c) { return c >= 0; });
}

// Appends the drawn beats [first, last) of `beats` (one stretch) to `out`.
void add_stretch(const RecordBeats& beats, size_t first, size_t last,
                 const std::vector<bool>& drawn, const Placement& placement, size_t columns,
                 TreeData& out) {
  const size_t n = last - first;
  std::vector<float> rr(n, 0.0f);
  for (size_t i = 1; i < n; ++i)
    rr[i] = float(beats.seconds[first + i] - beats.seconds[first + i - 1]);
  std::vector<std::vector<float>> values(kRrFamilies.size());
  for (size_t f = 0; f < kRrFamilies.size(); ++f)
    if (places_any(placement[f])) values[f] = kRrFamilies[f].compute(rr.data(), n);
  for (size_t i = 0; i < n; ++i) {
    if (!drawn[first + i]) continue;
    const size_t row = out.rows.size();
    out.rows.resize(row + columns, std::numeric_limits<float>::quiet_NaN());
    for (size_t f = 0; f < kRrFamilies.size(); ++f)
      for (size_t j = 0; j < placement[f].size(); ++j)
        if (placement[f][j] >= 0)
          out.rows[row + size_t(placement[f][j])] = values[f][i * placement[f].size() + j];
    out.labels.push_back(int(beats.classes[first + i]));
  }
}

// Which labelled beats become rows: each class's beats with the chance that leaves about
// kAnnotatedRowsPerClass of them.
std::vector<std::vector<bool>> draw_beats(const std::vector<RecordBeats>& records, uint64_t seed,
                                          size_t& labelled) {
  std::array<size_t, kBeatClassCount> count{};
  for (const RecordBeats& r : records)
    for (BeatClass c : r.classes)
      if (c != BeatClass::kNone) ++count[size_t(c)];
  labelled = 0;
  std::array<double, kBeatClassCount> chance{};
  for (size_t c = 0; c < count.size(); ++c) {
    labelled += count[c];
    chance[c] =
        count[c] == 0 ? 0.0 : std::min(1.0, double(kAnnotatedRowsPerClass) / double(count[c]));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::vector<bool>> drawn;
  for (const RecordBeats& r : records) {
    drawn.emplace_back(r.classes.size(), false);
    for (size_t i = 0; i < r.classes.size(); ++i)
      if (r.classes[i] != BeatClass::kNone)
        drawn.back()[i] = uniform(rng) < chance[size_t(r.classes[i])];
  }
  return drawn;
}

}  // namespace

AnnotatedBeats annotated_beat_rows(const std::vector<AnnotatedBeatSource>& sources,
                                   const std::vector<std::string>& names, uint64_t seed,
                                   int threads) {
  const Placement placement = place_families(names);
  AnnotatedBeats out;
  for (size_t f = 0; f < kRrFamilies.size(); ++f)
    for (size_t j = 0; j < placement[f].size(); ++j)
      if (placement[f][j] >= 0) out.filled.push_back(kRrFamilies[f].names[j]);
  if (out.filled.empty())
    throw ConfigError(
        "trees_annotated_beats gives the trees beats known only by their RR intervals, and the "
        "trees read no column computed from RR intervals (HINT: set rr_features, "
        "record_rhythm_features or rhythm_context_features, or drop trees_annotated_beats)");
  std::vector<RecordBeats> records;
  for (const AnnotatedBeatSource& source : sources)
    for (const std::string& record : records_of(source))
      records.push_back(read_beats(source, record));
  out.records = records.size();
  const std::vector<std::vector<bool>> drawn = draw_beats(records, seed, out.beats);
  // Each record's rows on its own, in parallel; joined in record order, so the rows do not
  // depend on the threads.
  std::vector<TreeData> parts(records.size());
  parallel_for(records.size(), std::max(1, threads), [&](size_t r) {
    const std::vector<double>& t = records[r].seconds;
    for (size_t first = 0; first < t.size();) {
      size_t last = first;
      while (last < t.size() && t[last] < t[first] + kAnnotatedStretchSeconds) ++last;
      if (last - first >= 3)
        add_stretch(records[r], first, last, drawn[r], placement, names.size(), parts[r]);
      first = last;
    }
  });
  out.data.columns = names.size();
  for (const TreeData& part : parts) {
    out.data.rows.insert(out.data.rows.end(), part.rows.begin(), part.rows.end());
    out.data.labels.insert(out.data.labels.end(), part.labels.begin(), part.labels.end());
  }
  return out;
}

std::shared_ptr<const AnnotatedBeats> shared_annotated_beat_rows(
    const std::vector<AnnotatedBeatSource>& sources, const std::vector<std::string>& names,
    uint64_t seed, int threads) {
  std::string key = std::to_string(seed);
  for (const AnnotatedBeatSource& source : sources) {
    key += "\n" + source.dir + "\n" + source.annotator;
    for (const std::string& record : source.records) key += "\t" + record;
  }
  for (const std::string& name : names) key += "\n" + name;
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const AnnotatedBeats>> made;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& beats = made[key];
  if (!beats)
    beats =
        std::make_shared<const AnnotatedBeats>(annotated_beat_rows(sources, names, seed, threads));
  return beats;
}

void expect_annotated_files(const std::vector<AnnotatedBeatSource>& sources) {
  for (const AnnotatedBeatSource& source : sources)
    for (const std::string& record : records_of(source)) expect_record_files(source, record);
}

void append_annotated_rows(TreeData& train, const TreeData& extra, double share) {
  std::array<double, kBeatClassCount> own{}, added{};
  for (size_t i = 0; i < train.labels.size(); ++i)
    own[size_t(train.labels[i])] += train.weights.empty() ? 1.0 : train.weights[i];
  for (int label : extra.labels) added[size_t(label)] += 1.0;
  if (train.weights.empty()) train.weights.assign(train.labels.size(), 1.0f);
  train.rows.insert(train.rows.end(), extra.rows.begin(), extra.rows.end());
  const double ratio = share / (1.0 - share);
  for (int label : extra.labels) {
    train.labels.push_back(label);
    train.weights.push_back(float(ratio * own[size_t(label)] / added[size_t(label)]));
  }
}

}  // namespace hlm
