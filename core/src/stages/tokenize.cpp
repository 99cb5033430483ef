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

StageOutput run_tokenize(StageContext& ctx) {
  const auto& p = ctx.params();
  const int threads = p.at("threads").get<int>();
  std::vector<std::shared_ptr<Dataset>> datasets;
  for (const auto& block : p.at("datasets"))
    datasets.push_back(ctx.plugins.create<Dataset>("dataset", block.at("plugin"), block));
  auto tokenizer =
      ctx.plugins.create<Tokenizer>("tokenizer", p.at("tokenizer").at("plugin"), p.at("tokenizer"));
  const auto records = list_records(datasets);
  if (records.empty())
    throw ConfigError("stage '{}': the datasets have no records", ctx.instance.id);

  std::mutex mutex;
  std::vector<std::string> failures;
  std::map<std::string, RecordLabels> labels;  // by record, for record_labels.json
  // with_labels: keep the record's labels too (the writing pass; the codebook pass needs none).
  auto read_and_extract = [&](size_t i, bool with_labels) -> std::optional<Beats> {
    try {
      const Record record = datasets[records[i].dataset]->read(records[i].name);
      check_tokenizable(record);
      Beats beats = tokenizer->extract(record);
      if (!with_labels) return beats;
      RecordLabels l = labels_of(record, beats.positions);
      std::lock_guard<std::mutex> lock(mutex);
      labels[records[i].name] = std::move(l);
      return beats;
    } catch (const DataError& e) {
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back(records[i].name + ": " + e.what());
      return std::nullopt;
    }
  };

  StageOutput out;
  const std::string codebook = ctx.stage_dir + "/codebook.bin";
  const double fit_start = now_seconds();
  const auto fitted_elsewhere = ctx.inputs_of_kind("tokenize");
  if (tokenizer->needs_fit() && !fitted_elsewhere.empty()) {
    const nlohmann::json& other = *fitted_elsewhere.front();
    const std::string path = other.at("artifacts").value("codebook", std::string());
    if (path.empty())
      throw ConfigError("stage '{}' needs a tokenize stage that fitted no codebook ({})",
                        ctx.instance.id, other.value("id", std::string("?")));
    tokenizer->load_state(path);  // CheckpointError naming the file if it does not fit
    out.artifacts["codebook"] = path;
    ctx.progress("codebook of " + path + " used (not fitted on these records)");
  } else if (tokenizer->needs_fit() && std::filesystem::exists(codebook)) {
    // Resuming an interrupted run (the engine clears a stage folder whose key changed): the
    // records already written were tokenized with this codebook.
    tokenizer->load_state(codebook);
    out.artifacts["codebook"] = codebook;
    ctx.progress("codebook of the interrupted run reused");
  } else if (tokenizer->needs_fit()) {
    // First pass: only a bounded sample of beat features is kept, never the whole dataset.
    FitSample sample(size_t(p.at("fit_sample_cap").get<int64_t>()));
    parallel_for(records.size(), threads, [&](size_t i) {
      if (stop_signal_received()) return;
      if (auto beats = read_and_extract(i, /*with_labels=*/false))
        sample.add(records[i].name, *beats);
    });
    if (stop_signal_received())
      throw Preempted(
          "tokenize stopped by a signal while sampling beats for the codebook (nothing "
          "kept yet); continue with hlm run --resume RUN_DIR");
    if (sample.size() == 0)
      throw DataError(
          "stage '{}': no beats to fit the tokenizer on in {} record(s) ({}){}", ctx.instance.id,
          records.size(), record_list(records),
          failures.empty()
              ? std::string(": the detector found none; check the tokenizer's lead, the "
                            "records' sampling rates and their signal files")
              : "; " + std::to_string(failures.size()) + " failed, first: " + failures.front());
    const Beats rows = sample.take();
    tokenizer->fit({&rows});
    tokenizer->save_state(codebook);
    out.artifacts["codebook"] = codebook;
    ctx.progress("codebook fitted in " + std::to_string(now_seconds() - fit_start).substr(0, 5) +
                 " s");
    failures.clear();  // the second pass reports them again
  }
  const double fit_seconds = now_seconds() - fit_start;

  const std::string store_path = ctx.stage_dir + "/tokens.hlmt";
  const std::vector<std::string> descriptor_names = tokenizer->descriptor_names();
  TokenStoreWriter writer(store_path, tokenizer->vocab_size(), tokenizer->identity(),
                          /*resume=*/true, uint32_t(descriptor_names.size()));
  std::atomic<uint64_t> beats_total{0};
  const double start = now_seconds();
  parallel_for(records.size(), threads, [&](size_t i) {
    if (writer.has_record(records[i].name) || stop_signal_received()) return;
    auto beats = read_and_extract(i, /*with_labels=*/true);
    if (!beats) return;
    tokenizer->assign(*beats);
    beats->record = records[i].name;
    writer.append(*beats);
    beats_total += beats->size();
    metrics().tokenize_beats(ctx.instance.id, beats->size());
  });
  if (stop_signal_received())  // the writer's log keeps every finished record for --resume
    throw Preempted(
        "tokenize stopped by a signal with {} of {} records written; "
        "continue with hlm run --resume RUN_DIR",
        writer.record_count(), records.size());
  writer.finish();
  const double seconds = now_seconds() - start;
  for (size_t f = 0; f < failures.size() && f < kFailuresShown; ++f)
    ctx.progress("record " + failures[f]);
  if (failures.size() > kFailuresShown)
    ctx.progress("and " + std::to_string(failures.size() - kFailuresShown) +
                 " more failed records (report.md lists them all)");
  if (failures.size() == records.size())
    throw DataError("stage '{}': every record failed; first: {}", ctx.instance.id,
                    failures.front());

  auto store = TokenStore::open(store_path);
  out.artifacts["token_store"] = store_path;
  // Records an interrupted run wrote have no labels yet: their beats are in the store.
  parallel_for(store.record_count(), threads, [&](size_t r) {
    const auto rec = store.record(r);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (labels.count(rec.name)) return;
    }
    const auto it = std::find_if(records.begin(), records.end(),
                                 [&](const RecordRef& ref) { return ref.name == rec.name; });
    const std::vector<int64_t> positions(store.positions() + rec.offset,
                                         store.positions() + rec.offset + rec.length);
    RecordLabels l = labels_of(datasets[it->dataset]->read(rec.name), positions);
    std::lock_guard<std::mutex> lock(mutex);
    labels[rec.name] = std::move(l);
  });
  for (auto it = labels.begin(); it != labels.end();)  // failed records are not in the store
    it = store.find_record(it->first) == store.record_count() ? labels.erase(it) : std::next(it);
  const std::string labels_path = ctx.stage_dir + "/record_labels.json";
  write_file_atomic(labels_path, to_json(labels).dump() + "\n");
  out.artifacts["record_labels"] = labels_path;
  out.results = {{"records", store.record_count()},
                 {"beats", store.token_count()},
                 {"vocab_size", store.vocab_size()},
                 {"tokenizer", store.tokenizer_identity()},
                 {"descriptors", descriptor_names},
                 {"failed_records", failures},
                 {"fit_seconds", fit_seconds},
                 {"tokenize_seconds", seconds},
                 {"beats_per_s", seconds > 0 ? double(beats_total) / seconds : 0.0}};
  std::string md =
      "| records | beats | vocab | beats/s (excl. fit) | codebook fit s |\n"
      "|---|---|---|---|---|\n";
  char row[256];
  std::snprintf(row, sizeof(row), "| %zu | %zu | %u | %.0f | %.2f |\n", store.record_count(),
                store.token_count(), store.vocab_size(), out.results["beats_per_s"].get<double>(),
                fit_seconds);
  md += row;
  for (const auto& f : failures) md += "\nFailed: " + f + "\n";
  out.report_md = md;
  ctx.progress(std::to_string(store.record_count()) + " records, " +
               std::to_string(store.token_count()) + " beats" +
               (failures.empty() ? "" : ", " + std::to_string(failures.size()) + " failed"));
  return out;
}

// Each dataset's fingerprint (edited, added or removed records change the cache key) and the
// tokenizer's identity, which covers a codebook file it was given (its contents' hash).
nlohmann::json tokenize_inputs(const nlohmann::json& params, const PluginHost& plugins) {
  nlohmann::json out = {{"datasets", nlohmann::json::array()}};
  for (const auto& block : params.at("datasets"))
    out["datasets"].push_back(
        plugins.create<Dataset>("dataset", block.at("plugin"), block)->fingerprint());
  const auto& tokenizer = params.at("tokenizer");
  out["tokenizer"] =
      plugins.create<Tokenizer>("tokenizer", tokenizer.at("plugin"), tokenizer)->identity();
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
            "most beats kept in memory for fitting a codebook (a uniform sample)", false}},
          run_tokenize,
          tokenize_inputs,
          /*preflight=*/nullptr};
}

}  // namespace hlm
