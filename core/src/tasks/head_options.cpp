// Head options (see head_options.h).
#include "tasks/head_options.h"

#include <cmath>

#include "hlm/errors.h"

namespace hlm {

namespace {

// A mean and a positive scale per input, all finite.
bool valid_scaling(const std::vector<float>& mean, const std::vector<float>& scale) {
  if (mean.size() != scale.size()) return false;
  for (size_t j = 0; j < scale.size(); ++j)
    if (!std::isfinite(mean[j]) || !std::isfinite(scale[j]) || !(scale[j] > 0)) return false;
  return true;
}

}  // namespace

HeadOptions HeadOptions::from_json(const nlohmann::json& p) {
  HeadOptions o;
  o.backbone = p.value("backbone", o.backbone);
  o.rr_features = p.value("rr_features", o.rr_features);
  o.record_rhythm_features = p.value("record_rhythm_features", o.record_rhythm_features);
  o.rhythm_context_features = p.value("rhythm_context_features", o.rhythm_context_features);
  o.rr_within_context = p.value("rr_within_context", o.rr_within_context);
  o.rr_pattern_features = p.value("rr_pattern_features", o.rr_pattern_features);
  o.morphology_features = p.value("morphology_features", o.morphology_features);
  o.descriptors = p.value("descriptors", o.descriptors);
  o.record_statistics = p.value("record_statistics", o.record_statistics);
  o.descriptor_columns = p.value("descriptor_columns", o.descriptor_columns);
  o.descriptor_mean = p.value("descriptor_mean", o.descriptor_mean);
  o.descriptor_scale = p.value("descriptor_scale", o.descriptor_scale);
  o.descriptor_names = p.value("descriptor_names", o.descriptor_names);
  // Written by finetune beside the classifier; evaluate reads them back.
  if (!valid_scaling(o.descriptor_mean, o.descriptor_scale) ||
      (!o.descriptor_names.empty() && o.descriptor_names.size() != o.descriptor_mean.size()) ||
      (!o.descriptor_mean.empty() && !o.descriptors) ||
      (!o.descriptor_columns.empty() &&
       (!o.descriptors || o.descriptor_columns.size() != o.descriptor_mean.size())))
    throw ConfigError(
        "the head's descriptor scaling is malformed ({} means, {} scales, {} columns, {} "
        "names, descriptors {}); re-run the finetune stage that wrote it",
        o.descriptor_mean.size(), o.descriptor_scale.size(), o.descriptor_columns.size(),
        o.descriptor_names.size(), o.descriptors);
  o.input_mean = p.value("input_mean", o.input_mean);
  o.input_scale = p.value("input_scale", o.input_scale);
  if (!valid_scaling(o.input_mean, o.input_scale))
    throw ConfigError(
        "the head's input scaling is malformed ({} means, {} scales); re-run the finetune "
        "stage that wrote it",
        o.input_mean.size(), o.input_scale.size());
  o.hidden_units = p.value("head_hidden", o.hidden_units);
  if (o.hidden_units < 0) throw ConfigError("head_hidden {} must be >= 0", o.hidden_units);
  o.class_weights = p.value("class_weights", o.class_weights);
  o.lr_scale = p.value("head_lr_scale", o.lr_scale);
  if (!(o.lr_scale > 0.0 && std::isfinite(o.lr_scale)))
    throw ConfigError("head_lr_scale {} must be a positive number", o.lr_scale);
  if (o.backbone != "full" && o.backbone != "frozen" && o.backbone != "scratch")
    throw ConfigError("backbone '{}' is not one of full, frozen, scratch", o.backbone);
  if (o.class_weights != "sqrt" && o.class_weights != "inverse" && o.class_weights != "none")
    throw ConfigError("class_weights '{}' is not one of sqrt, inverse, none", o.class_weights);
  return o;
}

nlohmann::json HeadOptions::to_json() const {
  nlohmann::json out = {{"backbone", backbone},
                        {"rr_features", rr_features},
                        {"record_rhythm_features", record_rhythm_features},
                        {"rhythm_context_features", rhythm_context_features},
                        {"rr_within_context", rr_within_context},
                        {"rr_pattern_features", rr_pattern_features},
                        {"morphology_features", morphology_features},
                        {"descriptors", descriptors},
                        {"record_statistics", record_statistics},
                        {"head_hidden", hidden_units},
                        {"class_weights", class_weights},
                        {"head_lr_scale", lr_scale}};
  if (descriptors) {
    if (!descriptor_columns.empty()) out["descriptor_columns"] = descriptor_columns;
    if (!descriptor_names.empty()) out["descriptor_names"] = descriptor_names;
    out["descriptor_mean"] = descriptor_mean;
    out["descriptor_scale"] = descriptor_scale;
  }
  if (!input_mean.empty()) {
    out["input_mean"] = input_mean;
    out["input_scale"] = input_scale;
  }
  return out;
}

std::vector<float> loss_weights(const std::vector<double>& counts, const std::string& scheme) {
  double total = 0;
  for (double c : counts) total += c + 1;
  std::vector<float> weights;
  for (double c : counts) {
    const double ratio = total / (double(counts.size()) * (c + 1));
    weights.push_back(float(scheme == "none"      ? 1.0
                            : scheme == "inverse" ? ratio
                                                  : std::sqrt(ratio)));
  }
  return weights;
}

void HeadOptions::check_task(const std::string& task) const {
  if (rhythm_context_features && task != "beats")
    throw ConfigError(
        "rhythm_context_features describe the rhythm around single beats (task "
        "beats), not {}; segment heads read their segment's RR statistics with rr_features",
        task);
  if (rr_within_context && task != "beats")
    throw ConfigError(
        "rr_within_context places single beats' intervals among those around them "
        "(task beats), not {}; segment heads read their segment's RR statistics with "
        "rr_features",
        task);
  if (rr_pattern_features && (task == "beats" || !rr_features))
    throw ConfigError(
        "rr_pattern_features add whether a segment's rhythm repeats to its RR "
        "statistics (tasks af and record, with rr_features: true); here task is {} and "
        "rr_features is {} (set task af or record and rr_features: true, or drop "
        "rr_pattern_features)",
        task, rr_features);
  if (morphology_features && task != "beats")
    throw ConfigError(
        "morphology_features describe single beats (task beats), not {}; segment "
        "heads read their segment's RR statistics with rr_features",
        task);
  if (record_statistics && task != "record")
    throw ConfigError(
        "record_statistics give a segment head its whole record's statistics, which only "
        "task record reads (here task is {}); set task: record or drop record_statistics",
        task);
  if (record_statistics && !rr_features && !record_rhythm_features && !descriptors)
    throw ConfigError(
        "record_statistics summarise the per-beat inputs over the record, and none is on: set "
        "rr_features, record_rhythm_features or descriptors, or drop record_statistics");
  // A segment head reads the extremes over the whole record: what a record's class needs, but
  // a constant over the stretches of one long record that task af tells apart.
  if (record_rhythm_features && task == "af")
    throw ConfigError(
        "record_rhythm_features give a segment head its record's extremes, the same "
        "for every segment of a record, so they cannot tell AF stretches of one record apart "
        "(use them with task beats or record, or set record_rhythm_features: false)");
}

}  // namespace hlm
