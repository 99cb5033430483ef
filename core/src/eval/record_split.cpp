// Record-wise splits (see record_split.h).
#include "eval/record_split.h"

#include <algorithm>
#include <random>

#include "hlm/errors.h"

namespace hlm::eval {
namespace {

// Sorted first, so the shuffle depends on the names and the seed only.
std::vector<std::string> shuffled(std::vector<std::string> records, uint64_t seed) {
  std::sort(records.begin(), records.end());
  records.erase(std::unique(records.begin(), records.end()), records.end());
  std::mt19937_64 rng(seed);
  // Fisher-Yates with our own index draw: std::shuffle's use of the engine is not specified,
  // and folds must be the same with every standard library.
  for (size_t i = records.size(); i > 1; --i) std::swap(records[i - 1], records[rng() % i]);
  return records;
}

}  // namespace

RecordSplit kfold_split(std::vector<std::string> records, int folds, int fold, uint64_t seed) {
  records = shuffled(std::move(records), seed);
  if (folds < 2 || size_t(folds) > records.size())
    throw ConfigError("folds={} needs 2 to {} (the number of records)", folds, records.size());
  if (fold < 0 || fold >= folds)
    throw ConfigError("fold={} is outside 0..{} (folds={})", fold, folds - 1, folds);
  RecordSplit split;
  for (size_t i = 0; i < records.size(); ++i)
    (int(i % size_t(folds)) == fold ? split.test : split.train).push_back(records[i]);
  return split;
}

RecordSplit holdout_split(std::vector<std::string> records, int count, uint64_t seed) {
  records = shuffled(std::move(records), seed);
  if (count < 0 || size_t(count) >= records.size())
    throw ConfigError("{} validation records out of {} would leave none to train on", count,
                      records.size());
  RecordSplit split;
  split.test.assign(records.begin(), records.begin() + count);
  split.train.assign(records.begin() + count, records.end());
  return split;
}

}  // namespace hlm::eval
