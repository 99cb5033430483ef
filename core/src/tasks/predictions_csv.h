// Every scored item of an evaluation as one CSV row, so the errors behind a confusion matrix can
// be found in the signals: which beat (or segment, or record) of which patient was called what,
// and how sure the model was.
#pragma once
#include <string>
#include <vector>

#include "hlm/token_store.h"
#include "tasks/score_items.h"

namespace hlm {

// The rows: record, sample, reference, predicted, then one probability column per class
// (p_<class>), then, for a blended model, each part's probabilities (p_<part>_<class>: the
// head's and the trees' alone, before the blend; parts in name order). `sample` is the beat's
// R-peak sample in its record (task beats), the first beat's of the segment (task af), empty for
// task record. The predicted class is most_probable's (score_items.h), as the confusion matrices
// count it. Rows in item order. Written atomically to `path`.
void write_predictions_csv(const std::string& path, const std::vector<ScoredItem>& items,
                           const TokenStore& store, const std::vector<std::string>& classes,
                           const std::string& task);

}  // namespace hlm
