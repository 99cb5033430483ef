// Splits by record, never by beat: the beats of one patient are alike, so a beat classifier
// scored on beats of patients it was trained on looks far better than it is (de Chazal 2004's
// inter-patient protocol). Every split here puts each record wholly on one side.
#pragma once
#include <cstdint>
#include <map>
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

// Items of each class per record (every vector the same length).
using ClassCounts = std::map<std::string, std::vector<int64_t>>;

// `count` validation records drawn so that they show the classes training sees, where the
// records allow it: early stopping and the trees' share are chosen on them, and a class they
// lack is not in the score those choices follow. For each class, the rarest first, while the
// validation side lacks it: the first record in holdout_split's order (the same seed) with at
// least `min_items` items of it is taken, if the records left to train keep at least as many
// items of that class as it takes (so a class held by one record stays with training). The
// rest of `count` is then taken in the same order. ConfigError as holdout_split.
RecordSplit class_covering_split(const ClassCounts& counts, int count, uint64_t seed,
                                 int64_t min_items);

}  // namespace hlm::eval
