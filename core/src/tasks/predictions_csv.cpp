// Scored items as CSV (see predictions_csv.h).
#include "tasks/predictions_csv.h"

#include <cstdio>

#include "hlm/errors.h"
#include "util/atomic_file.h"

namespace hlm {

void write_predictions_csv(const std::string& path, const std::vector<ScoredItem>& items,
                           const TokenStore& store, const std::vector<std::string>& classes,
                           const std::string& task) {
  std::string out = "record,sample,reference,predicted";
  for (const auto& c : classes) out += ",p_" + c;
  out += '\n';
  char number[32];
  for (const ScoredItem& item : items) {
    out += store.record(item.record).name;
    out += ',';
    // Beats and AF segments are keyed by a store-wide beat index; a record by its record index.
    if (task == "beats" || task == "af") {
      if (item.key >= store.token_count())
        throw InternalError("predictions of {}: item key {} is past the store's {} beats", path,
                            item.key, store.token_count());
      out += std::to_string(store.positions()[item.key]);
    }
    out += "," + classes.at(size_t(item.truth)) + "," + classes.at(most_probable(item.probs));
    for (float p : item.probs) {
      std::snprintf(number, sizeof(number), ",%.4f", double(p));
      out += number;
    }
    out += '\n';
  }
  write_file_atomic(path, out);
}

}  // namespace hlm
