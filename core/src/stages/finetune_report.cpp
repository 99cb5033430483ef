// The fine-tuning stage's report (see finetune_report.h).
#include "stages/finetune_report.h"

#include <algorithm>
#include <cstdio>

#include "tasks/record_statistics.h"

namespace hlm {
namespace {

// What the head reads and how it is trained, as a clause.
std::string head_text(const HeadOptions& head, const std::string& task) {
  return std::string("backbone ") + head.backbone +
         (head.rr_features ? ", RR features (before, after, local average)" : "") +
         (head.rr_pattern_features ? ", whether the rhythm repeats (quartiles of each interval's "
                                     "smallest change against "
                                     "the three before it)"
                                   : "") +
         (head.record_rhythm_features
              ? std::string(", rhythm against the record (RR before and after over the record's "
                            "median RR, local irregularity)") +
                    (task == "beats" ? "" : ", as the record's minimum and maximum")
              : "") +
         (head.rhythm_context_features
              ? ", the rhythm around the beat (without its own intervals: median change between "
                "successive intervals, share of changes above 0.1, their 25th percentile)"
              : "") +
         (head.rr_within_context
              ? ", where its RR before and after fall among the intervals around it (robust z)"
              : "") +
         (head.morphology_features
              ? ", each beat's shape against its record's template (distance, "
                "correlation, amplitude ratio, distance in and outside the QRS)"
              : "") +
         (head.descriptors
              ? ", the token store's " + std::to_string(head.descriptor_mean.size()) +
                    " descriptors per beat" +
                    (head.descriptor_columns.empty()
                         ? ""
                         : " (those of descriptor_prefix, store columns " +
                               std::to_string(head.descriptor_columns.front()) + " ... " +
                               std::to_string(head.descriptor_columns.back()) + ")") +
                    (task == "beats" ? "" : " (segment mean)")
              : "") +
         (head.record_statistics
              ? ", the record's statistics of these inputs (mean, spread, quantiles, extremes; "
                "descriptors by their median)"
              : "") +
         (head.hidden_units > 0
              ? ", a head with " + std::to_string(head.hidden_units) + " hidden units"
              : "") +
         (head.input_mean.empty() ? ""
                                  : ", these inputs standardised over the training " +
                                        std::string(task == "beats" ? "beats" : "segments")) +
         ", class weights " + head.class_weights;
}

// The store descriptors the trees read: those chosen whose column trees_leave_out left in the
// trees' rows (`statistics`; a record's or a segment's column is the descriptor's median, as
// record_statistics_names writes it). Every one chosen when the rows' names are not kept.
std::vector<std::string> read_store_names(const nlohmann::json& trees, const std::string& task) {
  const auto columns = trees.value("statistics", std::vector<std::string>());
  std::vector<std::string> out;
  for (const std::string& name : trees.value("store_descriptor_names", out)) {
    const std::string column =
        task == "beats" ? name : store_median_name(name, statistics_unit(task));
    if (columns.empty() || std::find(columns.begin(), columns.end(), column) != columns.end())
      out.push_back(name);
  }
  return out;
}

// The boosted trees beside the head and the blend of their votes, as a clause.
std::string trees_text(const nlohmann::json& trees, const std::string& task) {
  const std::vector<std::string> store_names = read_store_names(trees, task);
  const std::string store_span =
      store_names.empty() ? ""
                          : std::to_string(store_names.size()) +
                                " descriptors of the token store (" + store_names.front() +
                                (store_names.size() > 1 ? " ... " + store_names.back() : "") + ")";
  const std::string item = statistics_unit(task);
  const std::string record_inputs =
      "each " + item + "'s statistics of these inputs (mean, spread, quantiles, extremes)" +
      (store_span.empty() ? "" : " and its median of " + store_span + " (those by it alone)");
  const std::string beat_inputs =
      store_span.empty() ? "each beat's inputs and its code's centroid"
                         : "each beat's inputs, " + store_span + " and its code's centroid";
  char blend[800];
  std::snprintf(
      blend, sizeof(blend),
      "; beside it, boosted trees (XGBoost) over %s, %d of at most %d rounds, "
      "class weights %s, the "
      "%s class from the head's and the trees' probabilities weighted %.2f and %.2f "
      "(from the %s)",
      task == "beats" ? beat_inputs.c_str() : record_inputs.c_str(), trees["rounds"].get<int>(),
      trees["max_rounds"].get<int>(), trees["class_weights"].get<std::string>().c_str(),
      task == "beats" ? "beat's" : (item + "'s").c_str(), 1.0 - trees["weight"].get<double>(),
      trees["weight"].get<double>(), trees["weight_from"].get<std::string>().c_str());
  return blend;
}

}  // namespace

std::string finetune_report_md(const std::string& loss_line, const HeadOptions& head,
                               const std::string& task, const nlohmann::json& task_results,
                               size_t train_records, size_t validation_records, int64_t best_step,
                               const std::vector<std::string>& holdout, double tail) {
  std::string md = loss_line + "; " + head_text(head, task) + ". Trained on " +
                   std::to_string(train_records) + " records";
  if (task_results.contains("trees")) md += trees_text(task_results.at("trees"), task);
  if (validation_records > 0) {
    char best[160];
    std::snprintf(best, sizeof(best), "; early stopping on %zu validation records kept step %lld",
                  validation_records, (long long)best_step);
    md += best;
  }
  md += "; held out for evaluation: records " +
        (holdout.empty() ? std::string("none") : nlohmann::json(holdout).dump()) + ", last " +
        std::to_string(int(tail * 100)) + " % of every other record\n";
  return md;
}

}  // namespace hlm
