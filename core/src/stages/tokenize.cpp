// tokenize: dataset plugins -> tokenizer plugin -> token store. Records run in parallel; a
// codebook is fitted once (first pass) when the tokenizer needs one, or taken from a tokenize
// stage this one needs (so records kept for testing are tokenized with a codebook that never
// saw them); a record that fails is reported and the others still finish. An interrupted run
// resumes per record.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "distributed/preemption.h"
#include "ecg/record_labels.h"
#include "engine/fit_sample.h"
#include "engine/stage.h"
#include "hlm/dataset.h"
#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "hlm/tokenizer.h"
#include "hlm/util.h"
#include "metrics/metrics.h"
#include "stages/adopted_tokenizer.h"
#include "stages/finished_stage.h"
#include "util/atomic_file.h"
#include "util/parallel.h"

namespace hlm {
namespace {

struct RecordRef {
  size_t dataset;
  std::string name;
};

std::vector<RecordRef> list_records(const std::vector<std::shared_ptr<Dataset>>& datasets) {
  std::vector<RecordRef> records;
  std::map<std::string, size_t> owner;
  for (size_t d = 0; d < datasets.size(); ++d)
    for (const auto& name : datasets[d]->records()) {
      if (auto [it, fresh] = owner.emplace(name, d); !fresh)
        throw ConfigError(
            "record '{}' is in datasets {} and {}; record names must be unique across a tokenize "
            "stage's datasets",
            name, it->second, d);
      records.push_back({d, name});
    }
  return records;
}

// Failed records named on the console (report.md names them all).
constexpr size_t kFailuresShown = 20;

// The slowest rate at which a QRS complex (about 0.1 s wide) still spans a few samples: a
// record sampled slower has a wrong header or is no ECG, and would yield noise as "beats".
constexpr double kMinEcgHz = 50.0;

// A record sampled as an ECG can be, or DataError naming its header's rate.
void check_tokenizable(const Record& record) {
  const std::string where = record.source.empty() ? record.name : record.source;
  if (record.sampling_hz < kMinEcgHz)
    throw DataError(
        "{}: sampled at {} Hz, below the {} Hz an ECG's QRS complexes need to be found; check "
        "the sampling frequency on its header's record line, or leave the record out",
        where, record.sampling_hz, kMinEcgHz);
}

// "a, b, c" or "a, b, c and 17 more".
std::string record_list(const std::vector<RecordRef>& records) {
  std::string out;
  for (size_t i = 0; i < records.size() && i < 3; ++i) out += (i ? ", " : "") + records[i].name;
  if (records.size() > 3) out += " and " + std::to_string(records.size() - 3) + " more";
  return out;
}

// The finished tokenize stage at `path` (a stage folder, or a run holding it) whose tokenizer is
// the plugin `ours` names: a foundation run has one per tokenizer.
nlohmann::json tokenize_stage_of(const std::string& path, const nlohmann::json& ours,
                                 const std::string& param) {
  const std::string plugin = ours.at("plugin");
  return finished_stage(
      path, "tokenize", param,
      [&](const nlohmann::json& m) {
        return tokenizer_settings_of(m).value("plugin", "") == plugin;
      },
      "with tokenizer " + plugin);
}

// One tokenize stage's work: the codebook (fitted on a sample, reused from another stage, or
// kept from an interrupted run), then the token store written record by record in parallel,
// then every record's labels; failed records are collected, not fatal, unless all fail.
class TokenizeRun {
 public:
  explicit TokenizeRun(StageContext& ctx) : ctx_(ctx), p_(ctx.params()) {
    threads_ = p_.at("threads").get<int>();
    for (const auto& block : p_.at("datasets"))
      datasets_.push_back(ctx.plugins.create<Dataset>("dataset", block.at("plugin"), block));
    tokenizer_block_ = p_.at("tokenizer");
    tokenizer_ = make_tokenizer();
    // A tokenizer without a codebook still takes another run's token settings (a foundation's
    // rhythm tokens: their bins and first id).
    if (tokenizer_->needs_fit() || !other_run(p_, "codebook_from").empty()) adopt_codebook_source();
    records_ = list_records(datasets_);
    if (records_.empty())
      throw ConfigError("stage '{}': the datasets have no records", ctx.instance.id);
  }

  StageOutput run() {
    const double fit_start = now_seconds();
    if (tokenizer_->needs_fit()) out_.artifacts["codebook"] = codebook();
    fit_seconds_ = now_seconds() - fit_start;
    write_store();
    auto store = TokenStore::open(store_path());
    out_.artifacts["token_store"] = store_path();
    label_records_of_an_earlier_run(store);
    std::set<std::string> stored;  // a set, not find_record per label: thousands of records
    for (size_t r = 0; r < store.record_count(); ++r) stored.insert(store.record(r).name);
    for (auto it = labels_.begin(); it != labels_.end();)  // failed records are not in the store
      it = stored.count(it->first) ? std::next(it) : labels_.erase(it);
    const std::string labels_path = ctx_.stage_dir + "/record_labels.json";
    write_file_atomic(labels_path, to_json(labels_).dump() + "\n");
    out_.artifacts["record_labels"] = labels_path;
    report(store);
    return std::move(out_);
  }

 private:
  std::string store_path() const { return ctx_.stage_dir + "/tokens.hlmt"; }

  // Record i's beats, or nullopt after noting why it failed. with_labels: keep the record's
  // labels too (the writing pass; the codebook pass needs none).
  std::optional<Beats> read_and_extract(size_t i, bool with_labels) {
    try {
      const Record record = datasets_[records_[i].dataset]->read(records_[i].name);
      check_tokenizable(record);
      Beats beats = tokenizer_->extract(record);
      if (!with_labels) return beats;
      RecordLabels l = labels_of(record, beats.positions);
      std::lock_guard<std::mutex> lock(mutex_);
      labels_[records_[i].name] = std::move(l);
      return beats;
    } catch (const DataError& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      failures_.push_back(records_[i].name + ": " + e.what());
      return std::nullopt;
    }
  }

  std::shared_ptr<Tokenizer> make_tokenizer() const {
    return ctx_.plugins.create<Tokenizer>("tokenizer", tokenizer_block_.at("plugin"),
                                          tokenizer_block_);
  }

  // The finished tokenize stage whose codebook this one uses (codebook_from, else a tokenize
  // stage it needs), if any, with its token settings taken in place of this stage's.
  void adopt_codebook_source() {
    const std::string owner = "stage '" + ctx_.instance.id + "'";
    if (const std::string from = other_run(p_, "codebook_from"); !from.empty()) {
      source_ = tokenize_stage_of(from, tokenizer_block_, owner + ": codebook_from");
      source_is_other_run_ = true;
    } else if (const auto needed = ctx_.inputs_of_kind("tokenize"); !needed.empty()) {
      source_ = *needed.front();
    } else {
      return;
    }
    const AdoptedTokenizer adopted = adopt_token_settings(
        tokenizer_block_, tokenizer_settings_of(*source_), ctx_.plugins, owner);
    if (adopted.changes.empty()) return;
    tokenizer_block_ = adopted.block;
    tokenizer_ = make_tokenizer();
    std::string changes;
    for (const std::string& c : adopted.changes) changes += (changes.empty() ? "" : ", ") + c;
    ctx_.progress("token settings of the codebook's stage taken: " + changes);
  }

  // The codebook the tokenizer assigns with, loaded into it; returns its path.
  std::string codebook() {
    const std::string own = ctx_.stage_dir + "/codebook.bin";
    if (source_) {
      const std::string path = source_->at("artifacts").value("codebook", std::string());
      if (path.empty() && source_is_other_run_)
        throw ConfigError("stage '{}': codebook_from names {}, which fitted no codebook",
                          ctx_.instance.id, source_->at("dir").get<std::string>());
      if (path.empty())
        throw ConfigError("stage '{}' needs a tokenize stage that fitted no codebook ({})",
                          ctx_.instance.id, source_->value("id", std::string("?")));
      tokenizer_->load_state(path);  // CheckpointError naming the file if it does not fit
      ctx_.progress("codebook of " + path + " used" +
                    (source_is_other_run_ ? " (codebook_from)" : " (not fitted on these records)"));
      return path;
    }
    if (std::filesystem::exists(own)) {
      // Resuming an interrupted run (the engine clears a stage folder whose key changed): the
      // records already written were tokenized with this codebook.
      tokenizer_->load_state(own);
      ctx_.progress("codebook of the interrupted run reused");
      return own;
    }
    fit_codebook(own);
    return own;
  }

  // First pass: only a bounded sample of beat features is kept, never the whole dataset.
  void fit_codebook(const std::string& path) {
    const double start = now_seconds();
    FitSample sample(size_t(p_.at("fit_sample_cap").get<int64_t>()));
    parallel_for(records_.size(), threads_, [&](size_t i) {
      if (stop_signal_received()) return;
      if (auto beats = read_and_extract(i, /*with_labels=*/false))
        sample.add(records_[i].name, *beats);
    });
    if (stop_signal_received())
      throw Preempted(
          "tokenize stopped by a signal while sampling beats for the codebook (nothing "
          "kept yet); continue with hlm run --resume RUN_DIR");
    if (sample.size() == 0)
      throw DataError(
          "stage '{}': no beats to fit the tokenizer on in {} record(s) ({}){}", ctx_.instance.id,
          records_.size(), record_list(records_),
          failures_.empty()
              ? std::string(": the detector found none; check the tokenizer's lead, the "
                            "records' sampling rates and their signal files")
              : "; " + std::to_string(failures_.size()) + " failed, first: " + failures_.front());
    const Beats rows = sample.take();
    tokenizer_->fit({&rows});
    tokenizer_->save_state(path);
    ctx_.progress("codebook fitted in " + std::to_string(now_seconds() - start).substr(0, 5) +
                  " s");
    failures_.clear();  // the second pass reports them again
  }

  // Second pass: every record not yet in the store (an interrupted run's are), in parallel.
  void write_store() {
    descriptor_names_ = tokenizer_->descriptor_names();
    TokenStoreWriter writer(store_path(), tokenizer_->vocab_size(), tokenizer_->identity(),
                            /*resume=*/true, uint32_t(descriptor_names_.size()));
    std::atomic<uint64_t> beats_total{0};
    const double start = now_seconds();
    parallel_for(records_.size(), threads_, [&](size_t i) {
      if (writer.has_record(records_[i].name) || stop_signal_received()) return;
      auto beats = read_and_extract(i, /*with_labels=*/true);
      if (!beats) return;
      tokenizer_->assign(*beats);
      beats->record = records_[i].name;
      writer.append(*beats);
      beats_total += beats->size();
      metrics().tokenize_beats(ctx_.instance.id, beats->size());
    });
    if (stop_signal_received())  // the writer's log keeps every finished record for --resume
      throw Preempted(
          "tokenize stopped by a signal with {} of {} records written; "
          "continue with hlm run --resume RUN_DIR",
          writer.record_count(), records_.size());
    writer.finish();
    tokenize_seconds_ = now_seconds() - start;
    beats_written_ = beats_total;
    for (size_t f = 0; f < failures_.size() && f < kFailuresShown; ++f)
      ctx_.progress("record " + failures_[f]);
    if (failures_.size() > kFailuresShown)
      ctx_.progress("and " + std::to_string(failures_.size() - kFailuresShown) +
                    " more failed records (report.md lists them all)");
    if (failures_.size() == records_.size())
      throw DataError("stage '{}': every record failed; first: {}", ctx_.instance.id,
                      failures_.front());
  }

  // Records an interrupted run wrote have no labels yet: their beats are in the store.
  void label_records_of_an_earlier_run(const TokenStore& store) {
    parallel_for(store.record_count(), threads_, [&](size_t r) {
      const auto rec = store.record(r);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (labels_.count(rec.name)) return;
      }
      const auto it = std::find_if(records_.begin(), records_.end(),
                                   [&](const RecordRef& ref) { return ref.name == rec.name; });
      const std::vector<int64_t> positions(store.positions() + rec.offset,
                                           store.positions() + rec.offset + rec.length);
      RecordLabels l = labels_of(datasets_[it->dataset]->read(rec.name), positions);
      std::lock_guard<std::mutex> lock(mutex_);
      labels_[rec.name] = std::move(l);
    });
  }

  void report(const TokenStore& store) {
    const double beats_per_s =
        tokenize_seconds_ > 0 ? double(beats_written_) / tokenize_seconds_ : 0.0;
    out_.results = {{"records", store.record_count()},  {"beats", store.token_count()},
                    {"vocab_size", store.vocab_size()}, {"tokenizer", store.tokenizer_identity()},
                    {"descriptors", descriptor_names_}, {"failed_records", failures_},
                    {"fit_seconds", fit_seconds_},      {"tokenize_seconds", tokenize_seconds_},
                    {"beats_per_s", beats_per_s},       {"tokenizer_settings", tokenizer_block_}};
    std::string md =
        "| records | beats | vocab | beats/s (excl. fit) | codebook fit s |\n"
        "|---|---|---|---|---|\n";
    char row[256];
    std::snprintf(row, sizeof(row), "| %zu | %zu | %u | %.0f | %.2f |\n", store.record_count(),
                  store.token_count(), store.vocab_size(), beats_per_s, fit_seconds_);
    md += row;
    for (const auto& f : failures_) md += "\nFailed: " + f + "\n";
    out_.report_md = md;
    ctx_.progress(std::to_string(store.record_count()) + " records, " +
                  std::to_string(store.token_count()) + " beats" +
                  (failures_.empty() ? "" : ", " + std::to_string(failures_.size()) + " failed"));
  }

  StageContext& ctx_;
  const nlohmann::json& p_;
  int threads_ = 1;
  std::vector<std::shared_ptr<Dataset>> datasets_;
  nlohmann::json tokenizer_block_;  // the stage's tokenizer, with any adopted token settings
  std::shared_ptr<Tokenizer> tokenizer_;
  std::optional<nlohmann::json> source_;  // the stage whose codebook is used, if any
  bool source_is_other_run_ = false;      // source_ came from codebook_from
  std::vector<RecordRef> records_;
  std::mutex mutex_;  // guards failures_ and labels_ while records are read in parallel
  std::vector<std::string> failures_;
  std::map<std::string, RecordLabels> labels_;  // by record, for record_labels.json
  std::vector<std::string> descriptor_names_;
  double fit_seconds_ = 0, tokenize_seconds_ = 0;
  uint64_t beats_written_ = 0;
  StageOutput out_;
};

StageOutput run_tokenize(StageContext& ctx) { return TokenizeRun(ctx).run(); }

nlohmann::json tokenize_inputs(const nlohmann::json& params, const PluginHost& plugins) {
  nlohmann::json out = {{"datasets", nlohmann::json::array()}};
  for (const auto& block : params.at("datasets"))
    out["datasets"].push_back(
        plugins.create<Dataset>("dataset", block.at("plugin"), block)->fingerprint());
  const auto& tokenizer = params.at("tokenizer");
  out["tokenizer"] =
      plugins.create<Tokenizer>("tokenizer", tokenizer.at("plugin"), tokenizer)->identity();
  if (const std::string from = other_run(params, "codebook_from"); !from.empty()) {
    const nlohmann::json m = tokenize_stage_of(from, tokenizer, "codebook_from");
    const std::string codebook = m.at("artifacts").value("codebook", std::string());
    out["codebook_from"] = {{"codebook", codebook},
                            {"fingerprint", file_fingerprint(codebook)},
                            {"tokenizer", tokenizer_settings_of(m)}};
  }
  return out;
}

}  // namespace

StageKind tokenize_stage() {
  return {"tokenize",
          "5",
          {{"datasets", "list:plugin:dataset", "", "datasets to read (each a plugin block)", true},
           {"tokenizer", "plugin:tokenizer", "", "the tokenizer (a plugin block)", true},
           {"threads", "int[1,]", "2", "records tokenized in parallel", false},
           {"fit_sample_cap", "int[1,]", "400000",
            "most beats kept in memory for fitting a codebook (a uniform sample)", false},
           {"codebook_from", "string", "\"\"",
            "a finished tokenize stage of another run (its folder, or the run's: its tokenize "
            "stage with this stage's tokenizer plugin) whose codebook and token settings are "
            "used instead of fitting one (workflows/foundation.yaml); a tokenizer without a "
            "codebook takes its token settings; own: fit one here",
            false}},
          run_tokenize,
          tokenize_inputs,
          /*preflight=*/nullptr,
          /*check_plan=*/nullptr};
}

}  // namespace hlm
