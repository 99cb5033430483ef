// What boosted trees (tasks/boosted_trees.h) read for one beat, beside a beat head (task
// beats): the head's per-beat inputs (tasks/beat_features.h: RR features, rhythm against the
// record, rhythm around the beat, shape against the record's template, descriptors, as the
// head's options select), the
// token store's descriptors when asked for although the head does not read them (such as
// beat-vq's shape_descriptors: a waveform a tree splits on point by point, too wide for the
// head), and, when the tokens come from a codebook, the centroid of the beat's code: what its
// token stands for, as numbers a tree can split on. Between patients, trees on such inputs tell
// supraventricular beats from normal ones where a linear read of them does not.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/dsp/kmeans.h"
#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"
#include "tasks/tree_descriptor_columns.h"

namespace hlm {

// The store's inputs for the trees, computed once: rows() then only gathers them.
class BeatTreeInputs {
 public:
  // codebook: the codebook file the store was tokenized with, or empty. store_columns: the
  // store's descriptors read as they are (trees need no scaling) when options.descriptors does
  // not already read them all; DataError naming the store when it has none, or fewer than a
  // column asks for. ConfigError when there is nothing to read (no per-beat input and no
  // codebook).
  BeatTreeInputs(const TokenStore& store, const HeadOptions& options, const std::string& codebook,
                 const StoreDescriptorColumns& store_columns = {});
  // One row per beat of `beats` (store-wide indices), in that order. A beat whose token is no
  // code (UNK) has its centroid missing (NaN), which the trees route on their own.
  TreeRows rows(const std::vector<uint64_t>& beats) const;
  // The rows' column names, from the options and the codebook alone (no store read): what a key
  // that names columns is checked against before any row is made.
  static std::vector<std::string> column_names(const HeadOptions& options,
                                               const std::string& codebook,
                                               const StoreDescriptorColumns& store_columns);

 private:
  const TokenStore& store_;
  std::vector<std::string> names_;
  std::vector<float> inputs_;  // the head inputs, beat-major, inputs_width_ per beat
  size_t inputs_width_ = 0;
  std::vector<size_t> store_columns_;  // the store's descriptors read as they are
  dsp::Codebook codebook_;             // empty without a codebook

  static std::vector<std::string> names_of(const HeadOptions& options, int codebook_dim,
                                           const StoreDescriptorColumns& store_columns);
};

}  // namespace hlm
