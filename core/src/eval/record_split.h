// Splits by record, never by beat: the beats of one patient are alike, so a beat classifier
// scored on beats of patients it was trained on looks far better than it is (de Chazal 2004's
// inter-patient protocol). Every split here puts each record wholly on one side.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hlm::eval {

struct RecordSplit {
  std::vector<std::string> train, test;
};

// Fold `fold` of a `folds`-fold cross-validation: the records, shuffled with `seed`, dealt
// into `folds` groups of sizes differing by at most one; group `fold` is the test side. The
// same names, seed and fold count give the same folds whatever the order of `records`.
// ConfigError when folds < 2, folds > records or fold is outside [0, folds).
RecordSplit kfold_split(std::vector<std::string> records, int folds, int fold, uint64_t seed);

// `count` records taken out of `records` (shuffled with `seed`) as a validation side; the rest
// train. ConfigError when count would leave no training record.
RecordSplit holdout_split(std::vector<std::string> records, int count, uint64_t seed);

}  // namespace hlm::eval
