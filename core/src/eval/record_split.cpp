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

// Both validation draws leave at least one record to train on.
void expect_training_left(int count, size_t records) {
  if (count < 0 || size_t(count) >= records)
    throw ConfigError("{} validation records out of {} would leave none to train on", count,
                      records);
}

}  // namespace

RecordSplit kfold_split(std::vector<std::string> records, int folds, int fold, uint64_t seed) {
  records = shuffled(std::move(records), seed);
  if (folds < 2 || size_t(folds) > records.size())
    throw ConfigError(
        "folds={}: k-fold cross-validation needs from 2 folds up to one per record, and there "
        "are {} record(s); {}",
        folds, records.size(),
        records.size() < 2 ? "give the stage at least 2 records, or set folds: 0 (off)"
                           : "set folds from 2 to " + std::to_string(records.size()));
  if (fold < 0 || fold >= folds)
    throw ConfigError("fold={} is outside 0..{} (folds={})", fold, folds - 1, folds);
  RecordSplit split;
  for (size_t i = 0; i < records.size(); ++i)
    (int(i % size_t(folds)) == fold ? split.test : split.train).push_back(records[i]);
  return split;
}

RecordSplit holdout_split(std::vector<std::string> records, int count, uint64_t seed) {
  records = shuffled(std::move(records), seed);
  expect_training_left(count, records.size());
  RecordSplit split;
  split.test.assign(records.begin(), records.begin() + count);
  split.train.assign(records.begin() + count, records.end());
  return split;
}

RecordSplit class_covering_split(const ClassCounts& counts, int count, uint64_t seed,
                                 int64_t min_items) {
  std::vector<std::string> order;
  for (const auto& [name, items] : counts) order.push_back(name);
  order = shuffled(std::move(order), seed);
  expect_training_left(count, order.size());
  const size_t classes = counts.begin()->second.size();
  std::vector<int64_t> training(classes, 0);  // items of each class left on the training side
  for (const auto& [name, items] : counts)
    for (size_t c = 0; c < classes; ++c) training[c] += items.at(c);
  std::vector<bool> shown(classes, false), taken(order.size(), false);
  int left = count;
  auto take = [&](size_t i) {
    const std::vector<int64_t>& items = counts.at(order[i]);
    for (size_t c = 0; c < classes; ++c) {
      training[c] -= items[c];
      if (items[c] >= min_items) shown[c] = true;
    }
    taken[i] = true;
    --left;
  };
  // The rarest class first: any record shows the common one.
  std::vector<size_t> by_rarity(classes);
  for (size_t c = 0; c < classes; ++c) by_rarity[c] = c;
  std::stable_sort(by_rarity.begin(), by_rarity.end(),
                   [&](size_t a, size_t b) { return training[a] < training[b]; });
  for (size_t c : by_rarity)
    for (size_t i = 0; i < order.size() && left > 0 && !shown[c]; ++i) {
      const int64_t items = counts.at(order[i])[c];
      if (!taken[i] && items >= min_items && training[c] - items >= items) take(i);
    }
  for (size_t i = 0; i < order.size() && left > 0; ++i)
    if (!taken[i]) take(i);
  RecordSplit split;
  for (size_t i = 0; i < order.size(); ++i)
    (taken[i] ? split.test : split.train).push_back(order[i]);
  return split;
}

}  // namespace hlm::eval
