// Gradient-boosted trees (XGBoost, Debian's libxgboost-dev) beside a fine-tuned head: over each
// record's statistics (tasks/record_statistics.h) for task record, the same over each segment
// for task af, over each beat's inputs (tasks/beat_tree_inputs.h) for task beats. Trees split on a
// value wherever it separates the classes, which a small neural head over the same few dozen
// numbers does less well: on Challenge 2017 the trees read a record's shortest RR interval or its
// quantiles of irregularity directly. An item's class is the weighted mean of the head's and the
// trees' probabilities (blend_probabilities), the trees' share fixed or fit on validation records
// (fit_blend_weight).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hlm {

struct TreeOptions {
  int rounds = 300;            // boosting rounds at most (one tree per class each)
  int max_depth = 4;           // depth of each tree
  double eta = 0.05;           // learning rate
  double subsample = 0.8;      // share of the rows each tree sees
  double column_sample = 0.8;  // share of the columns each tree sees
  int threads = 1;
  uint64_t seed = 0;
};

// Named columns of rows, what a tree model reads: a record's statistics
// (tasks/record_statistics.h) or a beat's inputs (tasks/beat_tree_inputs.h).
struct TreeRows {
  std::vector<std::string> names;  // one per column
  std::vector<float> values;       // row-major [rows x names.size()]
  size_t columns() const { return names.size(); }
};

// `rows` without the columns whose names begin with one of `prefixes` (finetune's
// trees_leave_out), in the same order. ConfigError naming the prefix when one matches no
// column (a misspelt name would otherwise leave every column in).
TreeRows without_columns(TreeRows rows, const std::vector<std::string>& prefixes);

// Rows of `columns` values, row-major, each labelled with a class (0 .. classes-1) and
// weighted.
struct TreeData {
  std::vector<float> rows;
  size_t columns = 0;
  std::vector<int> labels;
  std::vector<float> weights;  // empty: every row weighs 1
  size_t size() const { return columns == 0 ? 0 : rows.size() / columns; }
};

class BoostedTrees {
 public:
  // Boosts options.rounds rounds on `train`. With validation rows, keeps only the rounds up to
  // the one with the lowest multi-class log loss on them.
  // DataError when a label is outside 0 .. classes-1 or the data is empty.
  static BoostedTrees fit(const TreeData& train, int classes, const TreeOptions& options,
                          const TreeData& validation = {});
  // Class probabilities of each row, row-major [rows x classes()]; DataError when the rows do
  // not have as many columns as the trees were fit on.
  std::vector<float> predict(const std::vector<float>& rows, size_t columns) const;
  int classes() const { return classes_; }
  size_t columns() const { return columns_; }
  int rounds() const;  // boosting rounds kept
  // XGBoost's JSON model, written whole or not at all.
  void save(const std::string& path) const;
  // DataError naming `path` when it cannot be read as trees over `columns` columns and
  // `classes` classes. Predicts on one thread.
  static BoostedTrees load(const std::string& path, int classes, size_t columns);

 private:
  struct Booster;
  BoostedTrees(std::shared_ptr<Booster> booster, int classes, size_t columns);
  std::shared_ptr<Booster> booster_;
  int classes_ = 0;
  size_t columns_ = 0;
};

// (1 - w) * head + w * trees, one probability.
inline double blend_probabilities(double head, double trees, double w) {
  return (1.0 - w) * head + w * trees;
}

// The trees' share w of a blend (1 - w) * head + w * trees, from 0, 0.1, ..., 1: the one with
// the lowest log loss of the items' reference classes (labels), the first of equals.
// head_probs and tree_probs are row-major [labels.size() x classes].
double fit_blend_weight(const std::vector<float>& head_probs, const std::vector<float>& tree_probs,
                        const std::vector<int>& labels, int classes);

}  // namespace hlm
