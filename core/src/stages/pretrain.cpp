// pretrain: model plugin + token store -> foundation checkpoint. world_size > 1 runs the
// ranks as processes through the multiproc runner, all-reducing over the backend plugin.
#include <algorithm>
#include <cstdio>
#include <set>

#include "engine/stage.h"
#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "metrics/metrics.h"
#include "plots/gnuplot.h"
#include "stages/finished_stage.h"
#include "stages/train_params.h"
#include "train/gpu_usage.h"
#include "train/rank_job.h"

namespace hlm {
namespace {

std::string loss_curve(const std::vector<double>& losses, size_t points) {
  std::string out;
  const size_t n = losses.size();
  for (size_t i = 0; i < points && n; ++i) {
    const size_t step = std::min(n - 1, i * (n - 1) / std::max<size_t>(1, points - 1));
    char cell[64];
    std::snprintf(cell, sizeof(cell), "%s%zu: %.3f", out.empty() ? "" : ", ", step + 1,
                  losses[step]);
    out += cell;
  }
  return out;
}

// The names of the records a token store holds: what a checkpoint pretrained on it has seen.
std::vector<std::string> record_names(const std::string& token_store) {
  const TokenStore store = TokenStore::open(token_store, /*verify_checksum=*/false);
  std::vector<std::string> names;
  for (size_t r = 0; r < store.record_count(); ++r) names.push_back(store.record(r).name);
  return names;
}

// The tokenizer identities a pretrain stage's checkpoint reads: one per token store it was
// pretrained on (`tokenizers`), or its one `tokenizer` for a stage of one store.
std::vector<std::string> tokenizers_read(const nlohmann::json& results) {
  if (results.contains("tokenizers")) return results.at("tokenizers");
  return {results.value("tokenizer", std::string())};
}

// pretrain with `from`: no training here; the checkpoint of a finished pretrain stage of
// another run (workflows/foundation.yaml), whose tokens must be this workflow's.
StageOutput pretrained_elsewhere(StageContext& ctx, const std::string& from) {
  const nlohmann::json& tokens = ctx.input_of_kind("tokenize");
  const nlohmann::json m =
      finished_stage(from, "pretrain", "stage '" + ctx.instance.id + "': from");
  const std::vector<std::string> theirs = tokenizers_read(m.at("results"));
  const std::string ours = tokens.at("results").value("tokenizer", std::string());
  if (std::find(theirs.begin(), theirs.end(), ours) == theirs.end())
    throw ConfigError(
        "stage '{}': the checkpoint of {} was pretrained on tokens of {}, but this workflow's "
        "tokens are {}; give its tokenize stage codebook_from the same run (and that run's "
        "tokenizer settings)",
        ctx.instance.id, m.at("dir").get<std::string>(), nlohmann::json(theirs).dump(), ours);
  StageOutput out;
  out.artifacts["checkpoint"] = m.at("artifacts").at("checkpoint");
  out.results = m.at("results");
  out.results["from"] = m.at("dir");
  out.results["tokenizer"] = ours;  // the tokens fine-tuning reads, of those it was pretrained on
  if (!out.results.contains("pretrained_records") && m.at("results").contains("token_store"))
    out.results["pretrained_records"] = record_names(m.at("results").at("token_store"));
  const size_t seen = out.results.value("pretrained_records", nlohmann::json::array()).size();
  out.report_md = "Pretrained elsewhere: the checkpoint of " + m.at("dir").get<std::string>() +
                  ", pretrained on " + std::to_string(seen) + " records.\n";
  // The checkpoint's model is the one fine-tuned: the stage's own is for `from: own`.
  if (const auto& ours = ctx.params().at("model"); ours != out.results.at("model")) {
    const std::string note = "the checkpoint's model " + out.results.at("model").dump() +
                             " is used; this stage's model " + ours.dump() +
                             " is the one pretrained with from: own";
    out.report_md += "\n" + note + ".\n";
    ctx.progress(note);
  }
  ctx.progress("checkpoint of " + m.at("dir").get<std::string>() + " used (pretrained on " +
               std::to_string(seen) + " records)");
  return out;
}

// Every token store a pretrain stage reads (one per tokenize stage in its needs, in order):
// their paths, tokenizers and records.
struct TokenInputs {
  std::vector<std::string> stores, tokenizers, records;
  std::vector<uint64_t> tokens;
};

TokenInputs token_inputs(const StageContext& ctx) {
  TokenInputs in;
  std::set<std::string> seen;
  for (const nlohmann::json* t : ctx.inputs_of_kind("tokenize")) {
    in.stores.push_back(t->at("artifacts").at("token_store"));
    in.tokenizers.push_back(t->at("results").at("tokenizer"));
    const TokenStore store = TokenStore::open(in.stores.back(), /*verify_checksum=*/false);
    in.tokens.push_back(store.token_count());
    for (size_t r = 0; r < store.record_count(); ++r)  // a record in both stores counts once
      if (seen.insert(store.record(r).name).second) in.records.push_back(store.record(r).name);
  }
  const auto& weights = ctx.params().at("store_weights");
  if (!weights.empty() && weights.size() != in.stores.size())
    throw ConfigError(
        "stage '{}': store_weights has {} weights for the {} tokenize stages it needs; give one "
        "per tokenize stage, in the order of needs, or none (each store by its tokens)",
        ctx.instance.id, weights.size(), in.stores.size());
  return in;
}

// The stores, their tokens, each one's share of the training windows and its held-out loss.
std::string stores_table(const TokenInputs& in, const nlohmann::json& p, const nlohmann::json& r) {
  const auto& weights = p.at("store_weights");
  const auto losses = r.value("eval_loss_by_store", std::vector<double>());
  double total = 0;
  for (size_t k = 0; k < in.stores.size(); ++k)
    total += weights.empty() ? double(in.tokens[k]) : weights[k].get<double>();
  std::string out =
      "| token store | tokenizer | tokens | share of windows | held-out loss |\n"
      "|---|---|---|---|---|\n";
  for (size_t k = 0; k < in.stores.size(); ++k) {
    const double w = weights.empty() ? double(in.tokens[k]) : weights[k].get<double>();
    char row[640], loss[32] = "";
    if (k < losses.size()) std::snprintf(loss, sizeof(loss), "%.4f", losses[k]);
    std::snprintf(row, sizeof(row), "| %s | %s | %llu | %.3f | %s |\n", in.stores[k].c_str(),
                  in.tokenizers[k].c_str(), (unsigned long long)in.tokens[k], w / total, loss);
    out += row;
  }
  return out;
}

StageOutput run_pretrain(StageContext& ctx) {
  const auto& p = ctx.params();
  if (const std::string from = other_run(p, "from"); !from.empty())
    return pretrained_elsewhere(ctx, from);
  const auto& tokens = ctx.input_of_kind("tokenize");
  const TokenInputs in = token_inputs(ctx);
  nlohmann::json job = {{"stage", ctx.instance.id},
                        {"model", p.at("model")},
                        {"backend", p.at("backend")},
                        {"options", training_options_json(p)},
                        {"token_store", tokens.at("artifacts").at("token_store")},
                        {"out_dir", ctx.stage_dir},
                        {"max_restarts", p.at("max_restarts")}};
  if (in.stores.size() > 1) {
    job["token_stores"] = in.stores;
    job["store_weights"] = p.at("store_weights");
  }
  const int world = p.at("world_size").get<int>();
  ctx.progress("training on " + std::to_string(world) + " rank(s), " +
               std::to_string(p.at("steps").get<int64_t>()) + " steps");
  nlohmann::json r = run_job_on_ranks(job, world, ctx.plugins, ctx.progress, ctx.launcher);
  // Rank processes set their held-out loss just before they exit, usually between two
  // scrapes: the run's own endpoint keeps rank 0's for as long as the run goes on.
  if (world > 1)
    metrics().eval_loss(ctx.instance.id, r.at("eval_loss").get<double>(),
                        r.at("steps").get<uint64_t>());
  StageOutput out;
  out.artifacts["checkpoint"] = r.at("checkpoint");
  out.results = r;
  out.results["model"] = p.at("model");
  // Which tokens the checkpoint reads: fine-tuning refuses a store of another tokenizer.
  out.results["tokenizer"] = tokens.at("results").at("tokenizer");
  // What it has seen, so that a record scored later can be named as transductive.
  out.results["token_store"] = tokens.at("artifacts").at("token_store");
  out.results["pretrained_records"] = in.records;
  if (in.stores.size() > 1) {
    out.results["tokenizers"] = in.tokenizers;
    out.results["token_stores"] = in.stores;
  }
  std::vector<double> losses = r.at("losses");
  char table[512];
  std::snprintf(table, sizeof(table),
                "| world size | steps | loss first | loss last | held-out loss | tokens/s | MFU |\n"
                "|---|---|---|---|---|---|---|\n| %d | %lld | %.4f | %.4f | %.4f | %.0f | %.3f |\n",
                world, (long long)r.at("steps").get<int64_t>(), r.at("loss_first").get<double>(),
                r.at("loss_last").get<double>(), r.at("eval_loss").get<double>(),
                r.at("tokens_per_s").get<double>(), r.at("mfu").get<double>());
  out.report_md =
      std::string(table) + (in.stores.size() > 1 ? "\n" + stores_table(in, p, r) : "") +
      (r.contains("gpu") ? "\nGPU (rank 0): " + gpu_usage_text(r.at("gpu")) + "\n" : "") +
      "\nLoss curve (step: loss): " + loss_curve(losses, 8) + "\n";
  std::string plot_note;
  for (const auto& plot : render_line_plot("loss", "Training loss (" + ctx.instance.id + ")",
                                           "step", "loss (next-token cross entropy)", losses,
                                           ctx.stage_dir + "/plots", &plot_note)) {
    out.artifacts["plot_loss"] = plot.png;
    // report.md sits in the run directory, one level above the stage's folder.
    out.report_md += "\n![" + plot.title + "](" + ctx.instance.id + "/plots/loss.png)\n";
  }
  if (!plot_note.empty()) out.report_md += "\n" + plot_note + "\n";
  char line[160];
  std::snprintf(line, sizeof(line), "loss %.3f -> %.3f, held-out %.3f, %.0f tokens/s",
                r.at("loss_first").get<double>(), r.at("loss_last").get<double>(),
                r.at("eval_loss").get<double>(), r.at("tokens_per_s").get<double>());
  ctx.progress(line);
  return out;
}

// With `from`, the checkpoint used, so that a foundation pretrained again is used again (a
// folder without one is refused here, before any stage runs).
nlohmann::json pretrain_inputs(const nlohmann::json& params, const PluginHost&) {
  const std::string from = other_run(params, "from");
  if (from.empty()) return nullptr;
  const nlohmann::json m = finished_stage(from, "pretrain", "from");
  const std::string checkpoint = m.at("artifacts").at("checkpoint");
  return {{"from_checkpoint", checkpoint}, {"fingerprint", file_fingerprint(checkpoint)}};
}

// Before any stage runs: the training device, and weights that are positive numbers.
void check_pretrain(const workflow::StageInstance& instance) {
  check_training_device(instance);
  for (const auto& w : instance.params.at("store_weights"))
    if (!w.is_number() || !(w.get<double>() > 0))
      throw ConfigError(
          "{}:{}: stage '{}': store_weights holds {}; give each store's share as a number above "
          "0",
          instance.file, instance.line, instance.id, w.dump());
}

}  // namespace

StageKind pretrain_stage() {
  auto params = training_param_specs("200", "3e-4");
  params.push_back(device_param_spec());
  params.push_back({"model", "plugin:model", "",
                    "the model pretrained here (a plugin block; with from, the checkpoint's)",
                    true});
  params.push_back({"backend", "plugin:backend", R"({"plugin": "gloo"})",
                    "process-group backend for world_size > 1", false});
  params.push_back({"world_size", "int[1,]", "1",
                    "data-parallel ranks (hlm submit sets nodes x ntasks_per_node)", false});
  params.push_back({"max_restarts", "int[0,]", "3",
                    "times a failed group of ranks is restarted from its newest checkpoint",
                    false});
  params.push_back({"from", "string", "\"\"",
                    "a finished pretrain stage of another run (its folder, or the run's): its "
                    "checkpoint and its model are used and nothing is trained here; own: "
                    "pretrain the stage's model here",
                    false});
  params.push_back({"store_weights", "list", "[]",
                    "with several tokenize stages in needs (a foundation's beat and rhythm "
                    "tokens), each one's share of the training windows, in the order of needs; "
                    "[]: each store by its tokens",
                    false});
  return {"pretrain",
          "2",
          params,
          run_pretrain,
          pretrain_inputs,
          check_pretrain,
          /*check_plan=*/nullptr};
}

}  // namespace hlm
