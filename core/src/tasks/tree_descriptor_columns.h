// Which of a token store's per-beat descriptors boosted trees read beyond the head's inputs
// (finetune's trees_descriptors and trees_descriptor_prefix): a beat's row reads them as they
// are (tasks/beat_tree_inputs.h), a record's row their median over its beats
// (tasks/record_statistics.h).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "hlm/token_store.h"

namespace hlm {

// Their columns in the store, and their names (the tokenize manifest's `descriptors`; empty:
// "store descriptor J").
struct StoreDescriptorColumns {
  std::vector<size_t> columns;
  std::vector<std::string> names;
  std::string name(size_t j) const {
    return j < names.size() ? names[j] : "store descriptor " + std::to_string(columns[j]);
  }
};

// The descriptors of `names` (a store's, in order) that begin with `prefix`, every one with an
// empty prefix. ConfigError naming `key` when none does: a prefix that selects nothing is a typo.
StoreDescriptorColumns select_store_descriptors(const std::vector<std::string>& names,
                                                const std::string& prefix, const std::string& key);

// DataError naming the store when it has no descriptors for the trees to read, or fewer than
// `columns` per beat.
void expect_tree_descriptors(const TokenStore& store, size_t columns = 1);

// The same, for the largest column `chosen` reads (nothing to check when it is empty).
void expect_tree_descriptors(const TokenStore& store, const StoreDescriptorColumns& chosen);

}  // namespace hlm
