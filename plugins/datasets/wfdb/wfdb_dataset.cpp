// The `wfdb` dataset plugin: the records of a PhysioNet WFDB folder (signals plus the reference
// annotations of one annotator), read with hlm::wfdb.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "hlm/dataset.h"
#include "hlm/errors.h"
#include "hlm/plugin.h"
#include "hlm/util.h"
#include "hlm/wfdb.h"

namespace {

namespace fs = std::filesystem;

// Why a folder gave no records, and what to do: a RECORDS file whose entries name no header
// hides the headers beside it.
std::string no_records_reason(const std::string& dir) {
  const auto entries = hlm::wfdb::records_file_entries(dir);
  if (!entries)
    return dir +
           ": no WFDB records (no .hea header files and no RECORDS file); check the "
           "dataset's dir";
  return (fs::path(dir) / "RECORDS").string() + ": lists " + std::to_string(entries->size()) +
         " record(s), none with a .hea header beside it, while the folder holds " +
         std::to_string(hlm::wfdb::header_names(dir).size()) +
         " header(s); list the records to read in RECORDS (one name per line, no extension), "
         "or remove RECORDS to read every header in the folder";
}

class WfdbDataset final : public hlm::Dataset {
 public:
  explicit WfdbDataset(const nlohmann::json& params)
      : dir_(params.at("dir").get<std::string>()),
        annotator_(params.value("annotator", std::string("atr"))),
        rhythm_annotator_(params.value("rhythm_annotator", std::string())),
        read_signals_(params.value("read_signals", true)) {
    const std::vector<std::string> available = hlm::wfdb::list_records(dir_);
    const nlohmann::json wanted =
        params.contains("records") ? params.at("records") : nlohmann::json::array();
    if (!wanted.is_array()) throw hlm::ConfigError("wfdb: 'records' must be a list of names");
    for (const nlohmann::json& entry : wanted) {
      const std::string name = record_name(entry);
      if (!hlm::is_inside_folder(dir_, (fs::path(dir_) / (name + ".hea")).string()))
        throw hlm::ConfigError(
            "wfdb: record '{}' lies outside {} (symlinks resolved); name records relative to "
            "'dir', without '..'",
            name, dir_);
      // A header is enough: RECORDS may not list every record of the folder.
      if (!fs::is_regular_file(fs::path(dir_) / (name + ".hea")))
        throw hlm::ConfigError("wfdb: record '{}' has no header in {}{}", name, dir_,
                               hlm::did_you_mean(name, available));
      records_.push_back(name);
    }
    if (wanted.empty()) records_ = available;
    if (records_.empty()) throw hlm::DataError("{}", no_records_reason(dir_));
    known_.insert(records_.begin(), records_.end());
    if (!rhythm_annotator_.empty()) {
      require_files(rhythm_annotator_, "rhythm_annotator");
      if (!annotator_.empty()) require_files(annotator_, "annotator");
    }
    if (const std::string csv = params.value("record_labels", std::string()); !csv.empty())
      read_labels((fs::path(dir_) / csv).string());
  }

  std::vector<std::string> records() const override { return records_; }

  hlm::Record read(const std::string& record) const override {
    if (!known_.count(record))
      throw hlm::DataError("wfdb dataset {}: record '{}' is not part of it{}", dir_, record,
                           hlm::did_you_mean(record, records_));
    hlm::wfdb::ReadOptions options;
    options.annotator = annotator_;
    options.rhythm_annotator = rhythm_annotator_;
    options.read_signals = read_signals_;
    hlm::Record r = hlm::wfdb::read_record(dir_, record, options);
    if (auto it = labels_.find(record); it != labels_.end()) r.label = it->second;
    return r;
  }

  // Every file of every record (name.*) with its size and modification time, hashed.
  std::string fingerprint() const override {
    std::map<std::string, std::map<std::string, std::string>> by_folder;  // folder -> file -> stat
    std::string text = "annotator=" + annotator_ + "\n" + labels_text_;
    if (!rhythm_annotator_.empty()) text += "rhythm_annotator=" + rhythm_annotator_ + "\n";
    for (const std::string& record : records_) {
      const fs::path base = fs::path(dir_) / record;
      const std::string folder = base.parent_path().string();
      if (!by_folder.count(folder)) by_folder[folder] = list_folder(folder);
      const std::map<std::string, std::string>& files = by_folder[folder];
      const std::string prefix = base.filename().string() + ".";
      text += record + "\n";
      for (auto it = files.lower_bound(prefix);
           it != files.end() && it->first.rfind(prefix, 0) == 0; ++it)
        text += " " + it->first + " " + it->second + "\n";
    }
    return "wfdb " + fs::absolute(dir_).lexically_normal().string() + " " +
           std::to_string(records_.size()) + " records " + hlm::hex64(hlm::fnv1a64(text));
  }

 private:
  // "record,label" lines (the PhysioNet Challenge REFERENCE format); every listed record of
  // this dataset must have one.
  void read_labels(const std::string& path) {
    hlm::require_text_file(path, uintmax_t(64) << 20, "a record_labels csv");
    std::ifstream in(path);
    if (!in)
      throw hlm::ConfigError(
          "wfdb: record_labels file {} cannot be read (name a csv of "
          "record,label lines, relative to dir)",
          path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const size_t comma = line.find(',');
      if (comma == std::string::npos || comma == 0 || comma + 1 == line.size())
        throw hlm::DataError("{}:{}: expected record,label, got '{}'", path, number, line);
      labels_[line.substr(0, comma)] = line.substr(comma + 1);
    }
    for (const auto& record : records_)
      if (!labels_.count(record))
        throw hlm::DataError("{}: no label for record '{}' (add a line '{},<label>')", path, record,
                             record);
    labels_text_ = "labels=" + hlm::hex64(hlm::fnv1a64(nlohmann::json(labels_).dump())) + "\n";
  }

  // With beats and rhythm in two files, a record lacking either would have no AF labels or no
  // beats: refused before anything is read.
  void require_files(const std::string& suffix, const char* key) const {
    std::vector<std::string> missing;
    for (const std::string& record : records_)
      if (!fs::is_regular_file(fs::path(dir_) / (record + "." + suffix))) missing.push_back(record);
    if (missing.empty()) return;
    throw hlm::ConfigError(
        "wfdb: {} '{}': {} of {} records in {} have no {} file (first: {}.{}); add the files, "
        "or name only the records that have them in 'records'",
        key, suffix, missing.size(), records_.size(), dir_, suffix, missing.front(), suffix);
  }

  static std::string record_name(const nlohmann::json& entry) {
    if (entry.is_string()) return entry.get<std::string>();
    if (entry.is_number_integer()) return std::to_string(entry.get<long long>());  // records: [208]
    throw hlm::ConfigError("wfdb: each entry of 'records' must be a record name, got {}",
                           entry.dump());
  }

  static std::map<std::string, std::string> list_folder(const std::string& folder) {
    std::map<std::string, std::string> files;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
      if (!e.is_regular_file(ec)) continue;
      const auto mtime = e.last_write_time(ec).time_since_epoch().count();
      files[e.path().filename().string()] =
          std::to_string(e.file_size(ec)) + " " + std::to_string(mtime);
    }
    return files;
  }

  std::string dir_;
  std::string annotator_;
  std::string rhythm_annotator_;
  bool read_signals_ = true;
  std::vector<std::string> records_;
  std::set<std::string> known_;
  std::map<std::string, std::string> labels_;  // record -> class, from record_labels
  std::string labels_text_;                    // their hash, part of the fingerprint
};

hlm::Dataset* make_wfdb_dataset(const nlohmann::json& params) { return new WfdbDataset(params); }

const hlm_param_decl kWfdbParams[] = {
    {"dir", "string", nullptr, "folder holding the records' .hea files (and RECORDS, if any)"},
    {"records", "list", "[]", "record names to use; [] means every record in dir"},
    {"annotator", "string", "\"atr\"",
     "annotation file read with each record (name.<annotator>); \"\" reads none"},
    {"rhythm_annotator", "string", "\"\"",
     "file of each record's rhythm changes when not the annotator's (afdb: beats in qrs, rhythm "
     "in atr); every record must have it, and its annotator file"},
    {"read_signals", "bool", "true",
     "false: headers and annotations only, the signal files are not decoded (for tokenizers "
     "that read annotations alone)"},
    {"record_labels", "string", "\"\"",
     "csv of record,label lines in dir (e.g. REFERENCE-v3.csv): each record's class"},
};

}  // namespace

HLM_PLUGIN(hlm::Dataset, "wfdb", "1.0.0",
           "PhysioNet WFDB records: formats 212/16/61/80/160/310/311/8/24/32, MIT annotations",
           kWfdbParams, make_wfdb_dataset)
