// Scored items as CSV (see predictions_csv.h).
#include "tasks/predictions_csv.h"

#include <cstdio>
#include <map>

#include "hlm/errors.h"
#include "util/atomic_file.h"

namespace hlm {

void write_predictions_csv(const std::string& path, const std::vector<ScoredItem>& items,
                           const TokenStore& store, const std::vector<std::string>& classes,
                           const std::string& task) {
  std::string out = "record,sample,reference,predicted";
  for (const auto& c : classes) out += ",p_" + c;
  // A blend's parts, each its own columns, so other blends can be studied from the file.
  const std::map<std::string, std::vector<float>> no_parts;
  const auto& parts = items.empty() ? no_parts : items.front().parts;
  for (const auto& [part, unused] : parts)
    for (const auto& c : classes) out += ",p_" + part + "_" + c;
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
    auto add_columns = [&](const std::vector<float>& probs) {
      for (float p : probs) {
        std::snprintf(number, sizeof(number), ",%.4f", double(p));
        out += number;
      }
    };
    add_columns(item.probs);
    for (const auto& [part, unused] : parts) {
      const auto it = item.parts.find(part);
      if (it == item.parts.end())
        throw InternalError("predictions of {}: an item lacks the blend's part '{}'", path, part);
      add_columns(it->second);
    }
    out += '\n';
  }
  write_file_atomic(path, out);
}

}  // namespace hlm
