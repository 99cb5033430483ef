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

#include "hlm/token_store.h"
#include "tasks/boosted_trees.h"
#include "tasks/head_options.h"

namespace hlm {

// One row per beat of `beats` (store-wide indices), in that order. codebook: the codebook file
// the store was tokenized with, or empty. A beat whose token is no code (UNK) has its centroid
// missing (NaN), which the trees route on their own. ConfigError when there is nothing to read
// (no per-beat input and no codebook).
TreeRows beat_tree_rows(const TokenStore& store, const std::vector<uint64_t>& beats,
                        const HeadOptions& options, const std::string& codebook);

}  // namespace hlm
