// The store descriptors boosted trees read (see tree_descriptor_columns.h).
#include "tasks/tree_descriptor_columns.h"

#include <algorithm>

#include "hlm/errors.h"

namespace hlm {

void expect_tree_descriptors(const TokenStore& store, size_t columns) {
  if (store.descriptor_count() == 0)
    throw DataError(
        "{}: the trees are to read the token store's descriptors (trees_descriptors), and it has "
        "none (HINT: tokenize with beat-vq's template_descriptors, shape_descriptors or "
        "p_wave_descriptors)",
        store.path());
  if (store.descriptor_count() < columns)
    throw DataError(
        "{}: the trees were fit on {} descriptors per beat and this store has {} (HINT: tokenize "
        "it with the tokenizer settings of the store the model was fine-tuned on)",
        store.path(), columns, store.descriptor_count());
}

void expect_tree_descriptors(const TokenStore& store, const StoreDescriptorColumns& chosen) {
  if (chosen.columns.empty()) return;
  expect_tree_descriptors(store,
                          *std::max_element(chosen.columns.begin(), chosen.columns.end()) + 1);
}

StoreDescriptorColumns select_store_descriptors(const std::vector<std::string>& names,
                                                const std::string& prefix, const std::string& key) {
  StoreDescriptorColumns out;
  for (size_t j = 0; j < names.size(); ++j)
    if (names[j].rfind(prefix, 0) == 0) {
      out.columns.push_back(j);
      out.names.push_back(names[j]);
    }
  if (out.columns.empty())
    throw ConfigError(
        "{}='{}' selects none of the token store's {} descriptors (HINT: their names begin "
        "with, for example, '{}')",
        key, prefix, names.size(), names.empty() ? std::string("(none)") : names.front());
  return out;
}

}  // namespace hlm
