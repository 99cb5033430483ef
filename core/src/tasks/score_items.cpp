// Scored items of one classifier (see score_items.h).
#include "tasks/score_items.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "hlm/ecg.h"
#include "hlm/errors.h"
#include "tasks/beat_classifier.h"
#include "tasks/beat_tree_inputs.h"
#include "tasks/boosted_trees.h"
#include "tasks/record_statistics.h"
#include "tasks/segment_classifier.h"
#include "tasks/segment_labels.h"

namespace hlm {
namespace {

size_t record_of(const TokenStore& store, uint64_t beat) {
  size_t lo = 0, hi = store.record_count();
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (store.record(mid).offset <= beat ? lo : hi) = mid;
  }
  return lo;
}

// The store's descriptor columns the trees were fit on (finetune results' trees): their list
// and names, or every column for results that give only `store_descriptors: true`.
StoreDescriptorColumns fitted_store_columns(const nlohmann::json& fitted, const TokenStore& store) {
  StoreDescriptorColumns out;
  if (fitted.contains("store_descriptor_columns")) {
    out.columns = fitted.at("store_descriptor_columns").get<std::vector<size_t>>();
    out.names = fitted.value("store_descriptor_names", std::vector<std::string>());
  } else if (fitted.value("store_descriptors", false))
    for (size_t j = 0; j < store.descriptor_count(); ++j) out.columns.push_back(j);
  return out;
}

// Each item's probabilities become the weighted mean of the head's and the boosted trees'
// (finetune results' trees.weight for the trees), the trees reading `rows` (one per item, in
// order); both are kept as the item's parts.
void blend_trees(const nlohmann::json& results, const std::string& path, const TreeRows& all_rows,
                 std::vector<ScoredItem>& items) {
  const auto& blend = results.at("trees");
  const TreeRows rows =
      without_columns(all_rows, blend.value("leave_out", std::vector<std::string>()));
  if (blend.at("statistics").get<std::vector<std::string>>() != rows.names)
    throw DataError(
        "the boosted trees {} were fit on other inputs than the head's options give today; "
        "rerun the finetune stage",
        path);
  const size_t k = results.at("classes").size();
  const auto trees = BoostedTrees::load(path, int(k), rows.columns());
  const std::vector<float> probs = trees.predict(rows.values, rows.columns());
  const double weight = blend.at("weight").get<double>();
  for (size_t i = 0; i < items.size(); ++i) {
    ScoredItem& item = items[i];
    std::vector<float> from_trees(probs.begin() + ptrdiff_t(i * k),
                                  probs.begin() + ptrdiff_t((i + 1) * k));
    item.parts["head"] = item.probs;
    for (size_t c = 0; c < k; ++c)
      item.probs[c] = float(blend_probabilities(item.probs[c], from_trees[c], weight));
    item.parts["trees"] = std::move(from_trees);
  }
}

std::vector<ScoredItem> score_beats(const nlohmann::json& results, const std::string& classifier,
                                    std::shared_ptr<Model> model, const TokenStore& store,
                                    const RecordSelection& selection, const std::string& trees) {
  const HeadOptions head = HeadOptions::from_json(results.at("head"));
  BeatClassifier c(model, 0, head, results.value("codebook", std::string()));
  c.load(classifier);
  std::vector<BeatWindow> windows = beat_windows(store, selection.whole, model->context());
  if (!selection.tails.empty()) {
    const auto tails =
        beat_windows(store, selection.tails, model->context(), 1.0 - selection.tail, 1.0);
    windows.insert(windows.end(), tails.begin(), tails.end());
  }
  std::vector<ScoredItem> out;
  for (auto& [beat, probs] : c.probabilities(store, windows)) {
    const uint8_t truth = store.labels()[beat];
    if (truth >= kBeatClassCount) continue;
    out.push_back({beat, record_of(store, beat), int(truth), std::move(probs), {}});
  }
  if (!trees.empty()) {
    std::vector<uint64_t> beats;
    for (const auto& item : out) beats.push_back(item.key);
    const auto& fitted = results.at("trees");
    blend_trees(results, trees,
                BeatTreeInputs(store, head, fitted.value("codebook", std::string()),
                               fitted_store_columns(fitted, store))
                    .rows(beats),
                out);
  }
  return out;
}

std::vector<ScoredItem> score_segments(const nlohmann::json& results, const std::string& classifier,
                                       std::shared_ptr<Model> model, const TokenStore& store,
                                       const RecordSelection& selection,
                                       const std::string& record_labels, const std::string& trees,
                                       int64_t segment_stride) {
  const std::string task = results.at("task");
  const std::vector<std::string> classes = results.at("classes");
  const int64_t length = results.at("segment_beats");
  const auto labels = read_record_labels(record_labels);
  // AF: segments that do not overlap, so each beat is scored once, unless segment_stride asks
  // for more. A record's class: its segments cover every beat, the last one ending at the
  // record's end.
  if (segment_stride != 0 && task != "af")
    throw InternalError("score_items: segment_stride {} for task {}", segment_stride, task);
  const auto label_of = segment_labeler(task, classes, store, labels);
  const int64_t stride = segment_stride > 0 ? segment_stride : length;
  const auto segments = make_segments(store, selection.whole, length, stride,
                                      results.value("min_segment_beats", int64_t(8)), label_of,
                                      /*cover_tail=*/task == "record");
  SegmentClassifier c(model, 0, HeadOptions::from_json(results.at("head")), int(classes.size()));
  c.load(classifier);
  const std::vector<float> probs = c.predict(store, segments);
  const size_t k = classes.size();
  std::vector<ScoredItem> out;
  if (task == "af") {
    for (size_t i = 0; i < segments.size(); ++i)
      out.push_back({segments[i].start,
                     segments[i].record,
                     segments[i].label,
                     {probs.begin() + ptrdiff_t(i * k), probs.begin() + ptrdiff_t((i + 1) * k)},
                     {},
                     segments[i].length});
    if (!trees.empty())
      blend_trees(results, trees,
                  segment_statistics(store, segments, HeadOptions::from_json(results.at("head")),
                                     fitted_store_columns(results.at("trees"), store)),
                  out);
    return out;
  }
  out = pool_by_record(segments, probs, k);
  add_records_too_short(store, selection.whole, label_of, k, out);
  if (!trees.empty()) {
    std::vector<size_t> records;
    for (const auto& item : out) records.push_back(item.record);
    blend_trees(results, trees,
                record_statistics(store, records, HeadOptions::from_json(results.at("head")),
                                  fitted_store_columns(results.at("trees"), store)),
                out);
  }
  return out;
}

}  // namespace

TreeRows segment_statistics(const TokenStore& store, const std::vector<Segment>& segments,
                            const HeadOptions& options, const StoreDescriptorColumns& medians) {
  std::vector<BeatSpan> spans;
  spans.reserve(segments.size());
  for (const Segment& s : segments)
    spans.push_back({s.record, s.start - store.record(s.record).offset, uint64_t(s.length)});
  return span_statistics(store, spans, options, medians);
}

void add_records_too_short(const TokenStore& store, const std::vector<size_t>& records,
                           const SegmentLabeler& label_of, size_t classes,
                           std::vector<ScoredItem>& items) {
  std::set<size_t> scored;
  for (const auto& item : items) scored.insert(item.record);
  std::vector<std::string> names;
  for (size_t r : records) {
    if (scored.count(r)) continue;
    const int label = label_of(r, 0, int64_t(store.record(r).length));
    if (label < 0) continue;
    items.push_back({r, r, label, std::vector<float>(classes, 1.0f / float(classes)), {}});
    names.push_back(store.record(r).name);
  }
  if (names.empty()) return;
  std::sort(items.begin(), items.end(),
            [](const ScoredItem& a, const ScoredItem& b) { return a.record < b.record; });
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
  spdlog::warn(
      "{} labelled record(s) of {} too short for a segment ({}{}): scored all the same, the "
      "head's probabilities even (the trees decide where the model has them)",
      names.size(), store.path(), list, names.size() > 5 ? ", ..." : "");
}

std::vector<ScoredItem> pool_by_record(const std::vector<Segment>& segments,
                                       const std::vector<float>& probs, size_t classes) {
  const size_t k = classes;
  std::map<size_t, ScoredItem> by_record;
  std::map<size_t, int> counts;
  for (size_t i = 0; i < segments.size(); ++i) {
    auto& item = by_record
                     .try_emplace(segments[i].record, ScoredItem{segments[i].record,
                                                                 segments[i].record,
                                                                 segments[i].label,
                                                                 std::vector<float>(k, 0.0f),
                                                                 {}})
                     .first->second;
    for (size_t c = 0; c < k; ++c) item.probs[c] += probs[i * k + c];
    ++counts[segments[i].record];
  }
  std::vector<ScoredItem> out;
  for (auto& [record, item] : by_record) {
    for (float& p : item.probs) p /= float(counts[record]);
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<ScoredItem> score_items(const nlohmann::json& results, const std::string& classifier,
                                    std::shared_ptr<Model> model, const TokenStore& store,
                                    const RecordSelection& selection,
                                    const std::string& record_labels, const std::string& trees,
                                    int64_t segment_stride) {
  if (results.value("task", std::string("beats")) == "beats")
    return score_beats(results, classifier, model, store, selection, trees);
  return score_segments(results, classifier, model, store, selection, record_labels, trees,
                        segment_stride);
}

}  // namespace hlm
