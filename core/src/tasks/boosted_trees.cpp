// Boosted trees beside a head (see boosted_trees.h), on XGBoost's C API.
#include "tasks/boosted_trees.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>

#include "hlm/errors.h"
#include "util/atomic_file.h"

namespace hlm {

struct BoostedTrees::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }
};

namespace {

// XGBoost reports failure by a non-zero return and XGBGetLastError.
void check(int status, const char* what) {
  if (status != 0) throw InternalError("XGBoost: {} failed: {}", what, XGBGetLastError());
}

// A DMatrix freed with its owner.
class Matrix {
 public:
  Matrix(const std::vector<float>& rows, size_t columns) {
    check(XGDMatrixCreateFromMat(rows.data(), rows.size() / columns, columns,
                                 std::numeric_limits<float>::quiet_NaN(), &handle_),
          "creating a matrix");
  }
  explicit Matrix(const TreeData& data) : Matrix(data.rows, data.columns) {
    std::vector<float> labels(data.labels.begin(), data.labels.end());
    check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), labels.size()), "setting labels");
    if (!data.weights.empty())
      check(XGDMatrixSetFloatInfo(handle_, "weight", data.weights.data(), data.weights.size()),
            "setting weights");
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() { XGDMatrixFree(handle_); }
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

void expect_valid(const TreeData& data, int classes, const char* which) {
  if (data.columns == 0 || data.size() == 0 || data.rows.size() % data.columns != 0 ||
      data.labels.size() != data.size() ||
      (!data.weights.empty() && data.weights.size() != data.size()))
    throw DataError("boosted trees: the {} rows are empty or not {} values each with one label",
                    which, data.columns);
  for (int label : data.labels)
    if (label < 0 || label >= classes)
      throw DataError("boosted trees: a {} row has class {}, not one of the {} classes", which,
                      label, classes);
}

void set(BoosterHandle booster, const char* key, const std::string& value) {
  check(XGBoosterSetParam(booster, key, value.c_str()), "setting a parameter");
}

// At least 1: XGBoost reads 0 as every core, which the caller's thread budget did not ask for.
void set_threads(BoosterHandle booster, int threads) {
  set(booster, "nthread", std::to_string(std::max(1, threads)));
}

// The log loss XGBoosterEvalOneIter reports, from "[i]\tvalidation-mlogloss:0.123".
double eval_loss(const char* report) {
  const std::string text(report);
  return std::strtod(text.c_str() + text.rfind(':') + 1, nullptr);
}

}  // namespace

BoostedTrees::BoostedTrees(std::shared_ptr<Booster> booster, int classes, size_t columns)
    : booster_(std::move(booster)), classes_(classes), columns_(columns) {}

BoostedTrees BoostedTrees::fit(const TreeData& train, int classes, const TreeOptions& options,
                               const TreeData& validation) {
  expect_valid(train, classes, "training");
  const bool watch = validation.size() > 0;
  if (watch) expect_valid(validation, classes, "validation");
  if (watch && validation.columns != train.columns)
    throw DataError("boosted trees: validation rows have {} values, training rows {}",
                    validation.columns, train.columns);
  const Matrix train_matrix(train);
  std::unique_ptr<Matrix> validation_matrix;
  if (watch) validation_matrix = std::make_unique<Matrix>(validation);
  DMatrixHandle cache[] = {train_matrix.get()};
  auto booster = std::make_shared<Booster>();
  check(XGBoosterCreate(cache, 1, &booster->handle), "creating a booster");
  BoosterHandle b = booster->handle;
  set(b, "objective", "multi:softprob");
  set(b, "num_class", std::to_string(classes));
  set(b, "eval_metric", "mlogloss");
  set(b, "tree_method", "hist");
  set(b, "max_depth", std::to_string(options.max_depth));
  set(b, "eta", std::to_string(options.eta));
  set(b, "subsample", std::to_string(options.subsample));
  set(b, "colsample_bytree", std::to_string(options.column_sample));
  // XGBoost's seed is a signed 64-bit integer.
  set(b, "seed", std::to_string(options.seed & uint64_t(std::numeric_limits<int64_t>::max())));
  set(b, "verbosity", "0");
  set_threads(b, options.threads);
  int best_rounds = options.rounds;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int round = 0; round < options.rounds; ++round) {
    check(XGBoosterUpdateOneIter(b, round, train_matrix.get()), "a boosting round");
    if (!watch) continue;
    DMatrixHandle watched[] = {validation_matrix->get()};
    const char* names[] = {"validation"};
    const char* report = nullptr;
    check(XGBoosterEvalOneIter(b, round, watched, names, 1, &report), "scoring validation rows");
    if (const double loss = eval_loss(report); loss < best_loss) {
      best_loss = loss;
      best_rounds = round + 1;
    }
  }
  if (best_rounds < options.rounds) {
    auto kept = std::make_shared<Booster>();
    check(XGBoosterSlice(b, 0, best_rounds, 1, &kept->handle), "keeping the best rounds");
    booster = kept;
  }
  return BoostedTrees(booster, classes, train.columns);
}

std::vector<float> BoostedTrees::predict(const std::vector<float>& rows, size_t columns) const {
  if (columns != columns_ || rows.size() % columns != 0)
    throw DataError("boosted trees fit on {} columns per row were given {}", columns_, columns);
  if (rows.empty()) return {};
  const Matrix matrix(rows, columns);
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
      R"("strict_shape": true})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(booster_->handle, matrix.get(), config, &shape, &dims, &result),
        "predicting");
  const size_t count = rows.size() / columns * size_t(classes_);
  if (dims != 2 || shape[0] * shape[1] != count)
    throw DataError("boosted trees give {} probabilities per row, not one per class ({})",
                    dims == 2 ? shape[1] : 1, classes_);
  return {result, result + count};
}

int BoostedTrees::rounds() const {
  int rounds = 0;
  check(XGBoosterBoostedRounds(booster_->handle, &rounds), "counting rounds");
  return rounds;
}

void BoostedTrees::save(const std::string& path) const {
  bst_ulong length = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(booster_->handle, R"({"format": "json"})", &length, &bytes),
        "saving");
  write_file_atomic(path, std::string_view(bytes, length));
}

BoostedTrees BoostedTrees::load(const std::string& path, int classes, size_t columns) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError("cannot read the boosted trees {}; rerun the finetune stage that wrote them",
                    path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto booster = std::make_shared<Booster>();
  check(XGBoosterCreate(nullptr, 0, &booster->handle), "creating a booster");
  if (XGBoosterLoadModelFromBuffer(booster->handle, bytes.data(), bytes.size()) != 0)
    throw DataError("{} is not an XGBoost model ({}); rerun the finetune stage that wrote it", path,
                    XGBGetLastError());
  // One thread, as evaluate's other work: 50,000 rows of a beat task take well under a second.
  set_threads(booster->handle, 1);
  bst_ulong features = 0;
  check(XGBoosterGetNumFeature(booster->handle, &features), "reading the model");
  BoostedTrees trees(booster, classes, columns);
  if (features != columns)
    throw DataError(
        "the boosted trees {} read {} columns per row, the head's inputs give {}; rerun "
        "the finetune stage",
        path, features, columns);
  // The class count: one probability per class of a row of zeros.
  try {
    trees.predict(std::vector<float>(columns, 0.0f), columns);
  } catch (const DataError& e) {
    throw DataError("the boosted trees {}: {}; rerun the finetune stage", path, e.what());
  }
  return trees;
}

TreeRows without_columns(TreeRows rows, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return rows;
  auto left_out = [&](const std::string& name) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& p) { return name.rfind(p, 0) == 0; });
  };
  for (const std::string& p : prefixes)
    if (std::none_of(rows.names.begin(), rows.names.end(),
                     [&](const std::string& name) { return name.rfind(p, 0) == 0; }))
      throw ConfigError(
          "trees_leave_out: no column of the trees' rows begins with '{}' (the finetune "
          "results' trees.statistics name every column)",
          p);
  std::vector<size_t> kept;
  TreeRows out;
  for (size_t j = 0; j < rows.names.size(); ++j)
    if (!left_out(rows.names[j])) kept.push_back(j), out.names.push_back(rows.names[j]);
  const size_t width = rows.columns(), items = width == 0 ? 0 : rows.values.size() / width;
  out.values.reserve(items * kept.size());
  for (size_t i = 0; i < items; ++i)
    for (size_t j : kept) out.values.push_back(rows.values[i * width + j]);
  return out;
}

double fit_blend_weight(const std::vector<float>& head_probs, const std::vector<float>& tree_probs,
                        const std::vector<int>& labels, int classes) {
  const size_t k = size_t(classes);
  if (head_probs.size() != labels.size() * k || tree_probs.size() != labels.size() * k)
    throw InternalError("fit_blend_weight: {} and {} probabilities for {} items of {} classes",
                        head_probs.size(), tree_probs.size(), labels.size(), classes);
  double best_weight = 0.0, best_loss = std::numeric_limits<double>::infinity();
  for (int tenth = 0; tenth <= 10; ++tenth) {
    const double w = tenth / 10.0;
    double loss = 0.0;
    for (size_t i = 0; i < labels.size(); ++i) {
      const size_t at = i * k + size_t(labels[i]);
      loss -= std::log(std::max(1e-9, blend_probabilities(head_probs[at], tree_probs[at], w)));
    }
    if (loss < best_loss - 1e-12) best_loss = loss, best_weight = w;
  }
  return best_weight;
}

}  // namespace hlm
