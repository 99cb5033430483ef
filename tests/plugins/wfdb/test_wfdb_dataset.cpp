// The `wfdb` dataset plugin through its C entry point, as the host loads it: descriptor,
// parameters, records, reading and the fingerprint. Skips when the plugin is not built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "ecg/record_labels.h"
#include "hlm/dataset.h"
#include "hlm/errors.h"
#include "hlm/plugin.h"
#include "support/wfdb_test_util.h"

namespace {

using hlm::test::data_path;
using hlm::test::TempDir;
using hlm::test::write_file;

std::vector<int64_t> beat_positions(const hlm::Record& r) {
  std::vector<int64_t> out;
  for (const hlm::Annotation& a : r.annotations)
    if (hlm::is_beat_code(a.code)) out.push_back(a.sample);
  return out;
}

// The share of a record's beats inside its AF episodes.
double af_share(const hlm::Record& r) {
  const std::vector<int64_t> beats = beat_positions(r);
  const std::vector<uint8_t> flags = hlm::af_flags(hlm::labels_of(r, beats), beats.size());
  return double(std::count(flags.begin(), flags.end(), uint8_t(1))) / double(beats.size());
}

const hlm_plugin_descriptor* load_wfdb_plugin() {
  const std::string path = std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_wfdb.so";
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) return nullptr;
  auto entry = reinterpret_cast<hlm_plugin_entry_fn>(dlsym(library, HLM_PLUGIN_ENTRY_SYMBOL));
  return entry ? entry() : nullptr;
}

#define HLM_REQUIRE_WFDB_PLUGIN(d)                     \
  const hlm_plugin_descriptor* d = load_wfdb_plugin(); \
  ASSERT_NE(d, nullptr) << "the wfdb plugin, a build dependency of this test, did not load"

// Creates a dataset or returns the plugin's error text.
std::unique_ptr<hlm::Dataset> create(const hlm_plugin_descriptor* d, const nlohmann::json& p,
                                     std::string* error) {
  void* object = nullptr;
  char message[512] = {0};
  if (d->create(&p, &object, message, sizeof(message)) != 0) {
    *error = message;
    return nullptr;
  }
  return std::unique_ptr<hlm::Dataset>(static_cast<hlm::Dataset*>(object));
}

TEST(WfdbDatasetPlugin, DeclaresItsKindNameAndParameters) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  EXPECT_EQ(d->abi_major, static_cast<uint32_t>(HLM_PLUGIN_ABI_MAJOR));
  EXPECT_STREQ(d->kind, "dataset");
  EXPECT_STREQ(d->name, "wfdb");
  EXPECT_STREQ(d->fingerprint, HLM_BUILD_FINGERPRINT);
  ASSERT_EQ(d->param_count, 6u);
  EXPECT_STREQ(d->params[0].name, "dir");
  EXPECT_EQ(d->params[0].default_json, nullptr);
  EXPECT_STREQ(d->params[1].name, "records");
  EXPECT_STREQ(d->params[1].default_json, "[]");
  EXPECT_STREQ(d->params[2].name, "annotator");
  EXPECT_STREQ(d->params[2].default_json, "\"atr\"");
  EXPECT_STREQ(d->params[3].name, "rhythm_annotator");
  EXPECT_STREQ(d->params[3].default_json, "\"\"");
  EXPECT_STREQ(d->params[4].name, "read_signals");
  EXPECT_STREQ(d->params[4].default_json, "true");
  EXPECT_STREQ(d->params[5].name, "record_labels");
}

TEST(WfdbDatasetPlugin, ReadsTheChosenMitdbRecordsConcurrently) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  HLM_REQUIRE_DATA("mitdb");
  std::string error;
  auto ds = create(
      d, {{"dir", data_path("mitdb")}, {"records", {208, "101"}}, {"annotator", "atr"}}, &error);
  ASSERT_TRUE(ds) << error;
  EXPECT_EQ(ds->records(), (std::vector<std::string>{"208", "101"}));
  hlm::Record r208, r101;
  std::thread a([&] { r208 = ds->read("208"); });
  std::thread b([&] { r101 = ds->read("101"); });
  a.join();
  b.join();
  EXPECT_EQ(r208.annotations.size(), 3040u);
  EXPECT_EQ(r101.digital[0][0], r101.signals[0].initial_value);
  EXPECT_THROW(ds->read("100"), hlm::DataError);
}

TEST(WfdbDatasetPlugin, ReportsAnUnknownRecordWithASuggestion) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  TempDir dir;
  write_file(dir.file("208.hea"), "208 0 360\n");
  std::string error;
  EXPECT_FALSE(
      create(d, {{"dir", dir.path()}, {"records", {"209"}}, {"annotator", "atr"}}, &error));
  EXPECT_NE(error.find("record '209' has no header in " + dir.path() + " (did you mean '208'?)"),
            std::string::npos)
      << error;
}

TEST(WfdbDatasetPlugin, ChangesItsFingerprintWhenARecordFileChanges) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  TempDir dir;
  write_file(dir.file("a.hea"), "a 0 360\n");
  write_file(dir.file("b.hea"), "b 0 360\n");
  std::string error;
  const nlohmann::json params = {
      {"dir", dir.path()}, {"records", nlohmann::json::array()}, {"annotator", "atr"}};
  auto ds = create(d, params, &error);
  ASSERT_TRUE(ds) << error;
  EXPECT_EQ(ds->records(), (std::vector<std::string>{"a", "b"}));
  const std::string before = ds->fingerprint();
  EXPECT_EQ(before, ds->fingerprint());
  write_file(dir.file("b.atr"), std::string(2, '\0'));
  EXPECT_NE(before, ds->fingerprint());
  auto qrs = create(
      d, {{"dir", dir.path()}, {"records", nlohmann::json::array()}, {"annotator", "qrs"}}, &error);
  ASSERT_TRUE(qrs) << error;
  EXPECT_NE(ds->fingerprint(), qrs->fingerprint());
}

TEST(WfdbDatasetPlugin, GivesEachRecordItsClassFromARecordLabelsCsv) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  TempDir dir;
  for (const char* name : {"A1", "A2"})
    write_file(dir.file(std::string(name) + ".hea"), std::string(name) + " 0 300\n");
  write_file(dir.file("REFERENCE.csv"), "A1,N\r\nA2,~\r\n");
  std::string error;
  nlohmann::json params = {{"dir", dir.path()},
                           {"records", nlohmann::json::array()},
                           {"annotator", ""},
                           {"record_labels", "REFERENCE.csv"}};
  auto ds = create(d, params, &error);
  ASSERT_TRUE(ds) << error;
  EXPECT_EQ(ds->read("A1").label, "N");
  EXPECT_EQ(ds->read("A2").label, "~");
  // The labels are part of the fingerprint: a relabelled record makes the cache key change.
  const std::string before = ds->fingerprint();
  write_file(dir.file("REFERENCE.csv"), "A1,A\nA2,~\n");
  EXPECT_NE(create(d, params, &error)->fingerprint(), before);
  // A record without a label, a malformed line and a missing file name the file.
  write_file(dir.file("REFERENCE.csv"), "A1,N\n");
  EXPECT_FALSE(create(d, params, &error));
  EXPECT_NE(error.find("REFERENCE.csv: no label for record 'A2'"), std::string::npos) << error;
  write_file(dir.file("REFERENCE.csv"), "A1,N\nA2\n");
  EXPECT_FALSE(create(d, params, &error));
  EXPECT_NE(error.find("REFERENCE.csv:2: expected record,label"), std::string::npos) << error;
  params["record_labels"] = "absent.csv";
  EXPECT_FALSE(create(d, params, &error));
  EXPECT_NE(error.find("absent.csv cannot be read"), std::string::npos) << error;
}

// afdb keeps its beats in .qrs and its rhythm in .atr; ltafdb has both files, so its .qrs
// beats with its .atr rhythm stand in for that layout.
TEST(WfdbDatasetPlugin, TakesTheRhythmChangesFromTheRhythmAnnotatorsFile) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  HLM_REQUIRE_DATA("ltafdb");
  const std::string dir = data_path("ltafdb");
  std::string error;
  const nlohmann::json records = {"00", "01", "03"};
  auto beats_only = create(d, {{"dir", dir}, {"records", records}, {"annotator", "qrs"}}, &error);
  ASSERT_TRUE(beats_only) << error;
  auto merged = create(
      d, {{"dir", dir}, {"records", records}, {"annotator", "qrs"}, {"rhythm_annotator", "atr"}},
      &error);
  ASSERT_TRUE(merged) << error;
  auto reference = create(d, {{"dir", dir}, {"records", records}}, &error);
  ASSERT_TRUE(reference) << error;
  EXPECT_NE(merged->fingerprint(), beats_only->fingerprint());
  for (const std::string name : {"00", "01", "03"}) {
    SCOPED_TRACE("record " + name);
    const hlm::Record qrs = beats_only->read(name);
    const hlm::Record r = merged->read(name);
    const hlm::Record atr = reference->read(name);
    // Without it the .qrs file has no rhythm, so no AF is known.
    EXPECT_FALSE(hlm::labels_of(qrs, beat_positions(qrs)).rhythm_annotated);
    // The beats are the .qrs file's, the rhythm changes the .atr file's, in sample order.
    EXPECT_EQ(beat_positions(r), beat_positions(qrs));
    std::vector<std::pair<int64_t, std::string>> rhythm, atr_rhythm;
    for (const hlm::Annotation& a : r.annotations)
      if (a.code == hlm::kRhythmChangeCode) rhythm.emplace_back(a.sample, a.aux);
    for (const hlm::Annotation& a : atr.annotations)
      if (a.code == hlm::kRhythmChangeCode) atr_rhythm.emplace_back(a.sample, a.aux);
    ASSERT_FALSE(atr_rhythm.empty());
    EXPECT_EQ(rhythm, atr_rhythm);
    EXPECT_TRUE(std::is_sorted(
        r.annotations.begin(), r.annotations.end(),
        [](const hlm::Annotation& x, const hlm::Annotation& y) { return x.sample < y.sample; }));
    // The unaudited beats fall in AF as often as the reference beats do.
    const hlm::RecordLabels labels = hlm::labels_of(r, beat_positions(r));
    EXPECT_TRUE(labels.rhythm_annotated);
    EXPECT_NEAR(af_share(r), af_share(atr), 0.01);
  }
}

TEST(WfdbDatasetPlugin, RefusesARhythmAnnotatorSomeRecordLacksOrThatHoldsNoRhythm) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  TempDir dir;
  const std::string no_annotations(2, '\0');  // an MIT annotation file's end mark alone
  for (const char* name : {"r1", "r2", "r3"})
    write_file(dir.file(std::string(name) + ".hea"), std::string(name) + " 0 250\n");
  write_file(dir.file("r1.qrs"), no_annotations);
  write_file(dir.file("r1.atr"), no_annotations);
  write_file(dir.file("r2.qrs"), no_annotations);
  write_file(dir.file("r3.atr"), no_annotations);
  const auto params = [&](const nlohmann::json& records) {
    return nlohmann::json{{"dir", dir.path()},
                          {"records", records},
                          {"annotator", "qrs"},
                          {"rhythm_annotator", "atr"}};
  };
  std::string error;
  EXPECT_FALSE(create(d, params({"r1", "r2"}), &error));
  EXPECT_NE(error.find("rhythm_annotator 'atr': 1 of 2 records"), std::string::npos) << error;
  EXPECT_NE(error.find("r2.atr"), std::string::npos) << error;
  // The beats' file is needed as much.
  EXPECT_FALSE(create(d, params({"r3"}), &error));
  EXPECT_NE(error.find("annotator 'qrs': 1 of 1 records"), std::string::npos) << error;
  // A rhythm file without a rhythm change names itself when the record is read.
  auto one = create(d, params({"r1"}), &error);
  ASSERT_TRUE(one) << error;
  try {
    one->read("r1");
    ADD_FAILURE() << "r1 read without a rhythm change";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("r1.atr") + ": no rhythm change"),
              std::string::npos)
        << e.what();
  }
}

// Annotation-only tokenizers need no samples: the signal files are left undecoded.
TEST(WfdbDatasetPlugin, ReadsHeadersAndAnnotationsAloneWhenAsked) {
  HLM_REQUIRE_WFDB_PLUGIN(d);
  HLM_REQUIRE_DATA("mitdb");
  std::string error;
  const nlohmann::json records = {"208"};
  auto full = create(d, {{"dir", data_path("mitdb")}, {"records", records}}, &error);
  auto light = create(
      d, {{"dir", data_path("mitdb")}, {"records", records}, {"read_signals", false}}, &error);
  ASSERT_TRUE(full && light) << error;
  const hlm::Record with = full->read("208"), without = light->read("208");
  EXPECT_EQ(with.digital.size(), 2u);
  EXPECT_TRUE(without.digital.empty());
  EXPECT_EQ(without.signals.size(), 2u);
  EXPECT_EQ(without.annotations.size(), with.annotations.size());
}

}  // namespace
