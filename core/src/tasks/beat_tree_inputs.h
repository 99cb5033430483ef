// What boosted trees (tasks/boosted_trees.h) read for one beat, beside a beat head (task
// beats): the head's per-beat inputs (tasks/beat_features.h: RR features, rhythm against the
// record, shape against the record's template, descriptors, as the head's options select) and,
// when the tokens come from a codebook, the centroid of the beat's code: what its token stands
// for, as numbers a tree can split on. Between patients, trees on such inputs tell
// supraventricular beats from normal ones where a linear read of them does not.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlm/dsp/kmeans.h"
#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"

namespace hlm {

// The store's inputs for the trees, computed once: rows() then only gathers them.
class BeatTreeInputs {
 public:
  // codebook: the codebook file the store was tokenized with, or empty. ConfigError when there
  // is nothing to read (no per-beat input and no codebook).
  BeatTreeInputs(const TokenStore& store, const HeadOptions& options, const std::string& codebook);
  // One row per beat of `beats` (store-wide indices), in that order. A beat whose token is no
  // code (UNK) has its centroid missing (NaN), which the trees route on their own.
  TreeRows rows(const std::vector<uint64_t>& beats) const;

 private:
  const TokenStore& store_;
  std::vector<std::string> names_;
  std::vector<float> inputs_;  // the head inputs, beat-major, inputs_width_ per beat
  size_t inputs_width_ = 0;
  dsp::Codebook codebook_;  // empty without a codebook
};

}  // namespace hlm
