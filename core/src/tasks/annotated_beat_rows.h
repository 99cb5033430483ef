// Beats of other patients known only from their reference annotations (no signal, such as
// ltdb's and ltafdb's), as extra training rows for the beat trees (finetune's
// trees_annotated_beats). The beat trees learn what an ectopic beat's rhythm looks like from the
// patients they are trained on; on MIT-BIH DS1 the supraventricular beats come from six records,
// and what the trees learn there did not carry to DS2's patients. Annotations hold the rhythm
// around many more patients' supraventricular beats. Each such beat's row has the columns the
// trees compute from RR intervals (hlm/dsp/rr_features.h) and every other column missing (NaN),
// which the trees route on their own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tasks/boosted_trees.h"

namespace hlm {

// One folder of WFDB annotation files: `records` (empty: every record with a header and an
// `annotator` file), beats read from <record>.<annotator>, sampling rate from <record>.hea.
struct AnnotatedBeatSource {
  std::string dir;
  std::vector<std::string> records;
  std::string annotator = "atr";
};

// A record is cut into stretches of this long before its rhythm is described, so that "the
// record's median RR" spans what it spans in a MIT-BIH record (30 minutes), not a day.
constexpr double kAnnotatedStretchSeconds = 1800.0;
// Rows kept per class at most, drawn at random: the trees are weighted by class, so a sample
// describes a class as well as all of its beats, for far less memory and time.
constexpr size_t kAnnotatedRowsPerClass = 20000;

struct AnnotatedBeats {
  TreeData data;                    // rows over `names` as given, labels 0 .. kBeatClassCount-1
  size_t records = 0;               // records read
  size_t beats = 0;                 // labelled beats in them, before the per-class draw
  std::vector<std::string> filled;  // the columns given values (the rest are NaN)
};

// The labelled beats (AAMI classes, hlm/ecg.h) of `sources` as rows over the trees' columns
// `names`: the columns named as rr_features, record_rhythm_features, rhythm_context_features or
// rr_within_context name theirs get those values, every other one NaN. ConfigError when no
// column of `names` comes from RR intervals; DataError naming the folder or file when a folder
// holds no such record, a named record is missing, or a file cannot be read.
// Records are described on `threads` threads; the rows are the same for any number.
AnnotatedBeats annotated_beat_rows(const std::vector<AnnotatedBeatSource>& sources,
                                   const std::vector<std::string>& names, uint64_t seed,
                                   int threads = 1);

// The same rows, made once per process for each (sources, names, seed): the fine-tunes of a
// run (folds, seeds, backbones) draw from the same folders, and describing ltafdb's 9 million
// beats takes seconds. The folders are taken not to change while the process runs.
std::shared_ptr<const AnnotatedBeats> shared_annotated_beat_rows(
    const std::vector<AnnotatedBeatSource>& sources, const std::vector<std::string>& names,
    uint64_t seed, int threads);

// DataError naming the folder or file when a source's folder holds no record, or a record's
// header or annotation file is missing: what annotated_beat_rows would find, found without
// reading the annotations.
void expect_annotated_files(const std::vector<AnnotatedBeatSource>& sources);

// Appends `extra` to `train`, whose weights are set, each class's extra rows together weighing
// share / (1 - share) times that class's rows of `train` (0 for a class `train` lacks).
// share in (0, 1).
void append_annotated_rows(TreeData& train, const TreeData& extra, double share);

}  // namespace hlm
