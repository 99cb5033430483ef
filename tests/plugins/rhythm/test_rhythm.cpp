// The rhythm tokenizer plugin, loaded as the host loads it: tokens of known beats, annotation
// and detected sources, errors, and a whole ltafdb record (annotations only) when the data is
// present. Skips when the plugin is not built (target rhythm).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "hlm/dsp/synthetic_ecg.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "hlm/wfdb.h"
#include "plugin/plugin_host.h"

namespace {

std::string plugin_file() {
  return std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_rhythm.so";
}

class Rhythm : public ::testing::Test {
 protected:
  void SetUp() override {
    // A build dependency of this test: missing, it is a failure, never a skip.
    ASSERT_TRUE(std::filesystem::exists(plugin_file())) << plugin_file();
    host_.load_library(plugin_file());
  }
  std::shared_ptr<hlm::Tokenizer> tokenizer(
      const nlohmann::json& params = nlohmann::json::object()) {
    return host_.create<hlm::Tokenizer>("tokenizer", "rhythm", params);
  }
  hlm::PluginHost host_;
};

hlm::Annotation annotation(int64_t sample, uint8_t code, std::string aux = "") {
  hlm::Annotation a;
  a.sample = sample, a.code = code, a.aux = std::move(aux);
  return a;
}

// Ten normal beats a second apart at 360 Hz, a ventricular beat 0.75 s after the last, a
// compensatory pause of 1.25 s, one more normal beat; a rhythm change and a noise mark between.
hlm::Record annotated_record() {
  hlm::Record r;
  r.name = "pvc", r.source = "test", r.sampling_hz = 360.0;
  r.annotations.push_back(annotation(0, 28, "(N"));
  for (int i = 0; i < 10; ++i) r.annotations.push_back(annotation(100 + 360 * i, 1));
  r.annotations.push_back(annotation(3610, 5));   // V: 270 samples after the last N
  r.annotations.push_back(annotation(3700, 14));  // noise: not a beat
  r.annotations.push_back(annotation(4060, 1));   // N: 450 samples after the V
  return r;
}

}  // namespace

TEST_F(Rhythm, VocabularyIsFiveClassesTimesSixteenBinsPlusTheSpecialTokens) {
  EXPECT_EQ(tokenizer()->vocab_size(), 84u);
  EXPECT_EQ(tokenizer({{"bins", 8}})->vocab_size(), 44u);
  EXPECT_FALSE(tokenizer()->needs_fit());
}

TEST_F(Rhythm, GivesKnownBeatsTheirClassAndRrBin) {
  auto t = tokenizer();
  hlm::Beats b = t->extract(annotated_record());
  t->assign(b);
  ASSERT_EQ(b.size(), 12u);  // the rhythm change and the noise mark are not beats
  const std::vector<uint32_t> steady(10, 4 + 8);  // class N, ratio 1.0: bin 8
  EXPECT_EQ(std::vector<uint32_t>(b.tokens.begin(), b.tokens.begin() + 10), steady);
  EXPECT_EQ(b.tokens[10], 4u + 2 * 16 + 4);   // V at 0.75 of the median: bin 4
  EXPECT_EQ(b.tokens[11], 4u + 0 * 16 + 10);  // N after a pause of 1.25: bin 10
  EXPECT_EQ(b.labels[10], uint8_t(hlm::BeatClass::kV));
  EXPECT_EQ(b.labels[11], uint8_t(hlm::BeatClass::kN));
  EXPECT_EQ(b.positions[10], 3610);
  EXPECT_FLOAT_EQ(b.rr_seconds[0], 0.0f);
  EXPECT_FLOAT_EQ(b.rr_seconds[10], 0.75f);
}

// A ventricular flutter wave ('!', code 31) is a beat to WFDB but in no AAMI class: its token
// takes Q's row, so the vocabulary is the same, and it keeps no label for fine-tuning.
TEST_F(Rhythm, AFlutterWaveTakesQsTokenRowAndNoLabel) {
  hlm::Record r = annotated_record();
  r.annotations.push_back(annotation(4420, 31));  // '!' one median interval after the last N
  auto t = tokenizer();
  hlm::Beats b = t->extract(r);
  ASSERT_EQ(b.size(), 13u);
  EXPECT_EQ(b.tokens[12], 4u + 4 * 16 + 8);  // Q's row, ratio 1.0: bin 8
  EXPECT_EQ(b.labels[12], uint8_t(hlm::BeatClass::kNone));
  EXPECT_LT(b.tokens[12], t->vocab_size());
}

// Without beat classes the V and the flutter wave read as the N beats do, by their RR bin
// alone; their labels stay.
TEST_F(Rhythm, WithoutBeatClassesEveryTokenIsInNsRowAndTheLabelsStay) {
  hlm::Record r = annotated_record();
  r.annotations.push_back(annotation(4420, 31));
  auto t = tokenizer({{"beat_classes", false}});
  hlm::Beats b = t->extract(r);
  t->assign(b);
  ASSERT_EQ(b.size(), 13u);
  EXPECT_EQ(b.tokens[10], 4u + 0 * 16 + 4);   // the V at 0.75 of the median
  EXPECT_EQ(b.tokens[11], 4u + 0 * 16 + 10);  // the N after the pause
  EXPECT_EQ(b.tokens[12], 4u + 0 * 16 + 8);   // the flutter wave
  EXPECT_EQ(b.labels[10], uint8_t(hlm::BeatClass::kV));
  EXPECT_EQ(b.labels[12], uint8_t(hlm::BeatClass::kNone));
}

// With first_token the rows start after another tokenizer's ids (a foundation's beat codes),
// so one model reads both: every id moves by the same amount, and so does the vocabulary.
TEST_F(Rhythm, FirstTokenMovesEveryIdAndTheVocabularyPastAnotherTokenizers) {
  auto own = tokenizer();
  auto shared = tokenizer({{"first_token", 260}});
  EXPECT_EQ(shared->vocab_size(), 260u + 80u);
  const hlm::Beats a = own->extract(annotated_record());
  const hlm::Beats b = shared->extract(annotated_record());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b.tokens[i], a.tokens[i] + 256) << i;
  EXPECT_EQ(b.tokens[10], 260u + 2 * 16 + 4);  // the V: class V's row, bin 4
  EXPECT_NE(own->identity(), shared->identity());
  EXPECT_EQ(own->identity(), tokenizer({{"first_token", 4}})->identity());
  EXPECT_THROW(tokenizer({{"first_token", 3}}), hlm::PluginError);
}

TEST_F(Rhythm, IdentityChangesWithTheParametersThatChangeTokens) {
  EXPECT_EQ(tokenizer()->identity(), tokenizer({{"bins", 16}})->identity());
  EXPECT_EQ(tokenizer()->identity(), tokenizer({{"beat_classes", true}})->identity());
  EXPECT_NE(tokenizer()->identity(), tokenizer({{"beat_classes", false}})->identity());
  EXPECT_NE(tokenizer()->identity(), tokenizer({{"median_window", 4}})->identity());
  EXPECT_NE(tokenizer()->identity(), tokenizer({{"source", "detected"}})->identity());
  EXPECT_EQ(tokenizer()->identity().rfind("rhythm:", 0), 0u);
}

TEST_F(Rhythm, RefusesAnUnknownSourceSuggestingTheClosestOne) {
  try {
    tokenizer({{"source", "detcted"}});
    FAIL() << "no error";
  } catch (const hlm::PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'detected'"), std::string::npos) << e.what();
  }
}

TEST_F(Rhythm, ARecordWithoutBeatAnnotationsIsAnErrorNamingIt) {
  hlm::Record r = annotated_record();
  r.annotations.resize(1);  // the rhythm change only
  try {
    tokenizer()->extract(r);
    FAIL() << "no error";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("'pvc'"), std::string::npos) << e.what();
  }
}

TEST_F(Rhythm, DetectedBeatsTakeClassNAndTheMatchedReferenceLabel) {
  hlm::dsp::SyntheticEcgOptions o;
  o.seconds = 60, o.pvc_rate = 0.1, o.seed = 3;
  const hlm::Record r = hlm::dsp::synthesize_ecg("syn", o);
  int beats = 0, pvcs = 0;
  for (const auto& a : r.annotations) beats += hlm::is_beat_code(a.code), pvcs += a.code == 5;
  auto t = tokenizer({{"source", "detected"}});
  hlm::Beats b = t->extract(r);
  t->assign(b);
  EXPECT_NEAR(double(b.size()), beats, 2.0);
  for (uint32_t token : b.tokens) EXPECT_LT(token, 4u + 16u) << "a detected beat outside class N";
  EXPECT_NEAR(double(std::count(b.labels.begin(), b.labels.end(), uint8_t(hlm::BeatClass::kV))),
              pvcs, 1.0);
  // auto uses the annotations when there are beat annotations, so PVCs keep their class.
  hlm::Beats a = tokenizer({{"source", "auto"}})->extract(r);
  EXPECT_EQ(a.size(), size_t(beats));
  EXPECT_TRUE(std::any_of(a.tokens.begin(), a.tokens.end(),
                          [](uint32_t k) { return k >= 4 + 32 && k < 4 + 48; }));
}

TEST_F(Rhythm, DetectingOnAnAnnotationOnlyRecordIsAnErrorWithAHint) {
  try {
    tokenizer({{"source", "detected"}})->extract(annotated_record());
    FAIL() << "no error";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("source: annotations"), std::string::npos) << e.what();
  }
}

TEST_F(Rhythm, TokenizesAnAnnotationOnlyLtafdbRecordBeatForBeat) {
  const std::string dir = std::string(HLM_TEST_DATA_DIR) + "/ltafdb";
  if (!std::filesystem::exists(dir + "/00.atr")) GTEST_SKIP() << dir << " is absent";
  const hlm::Record r = hlm::wfdb::read_record(dir, "00");
  ASSERT_TRUE(r.digital.empty());
  const auto beats =
      size_t(std::count_if(r.annotations.begin(), r.annotations.end(),
                           [](const hlm::Annotation& a) { return hlm::is_beat_code(a.code); }));
  auto t = tokenizer();
  hlm::Beats b = t->extract(r);
  t->assign(b);
  EXPECT_EQ(b.size(), beats);
  EXPECT_GT(b.size(), 100000u);
  EXPECT_TRUE(std::is_sorted(b.positions.begin(), b.positions.end()));
  for (uint32_t token : b.tokens) ASSERT_TRUE(token >= 4 && token < 84) << token;
  // Mostly normal beats; and an irregular rhythm spreads them over many RR bins.
  const auto normal =
      std::count_if(b.tokens.begin(), b.tokens.end(), [](uint32_t k) { return k < 20; });
  EXPECT_GT(double(normal), 0.8 * double(b.size()));
  std::vector<int> used(84, 0);
  for (uint32_t token : b.tokens) used[token] = 1;
  EXPECT_GE(std::count(used.begin() + 4, used.begin() + 20, 1), 12);
}
