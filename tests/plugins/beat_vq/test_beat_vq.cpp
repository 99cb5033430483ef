// The beat-vq tokenizer and synthetic dataset plugins, loaded as the host loads them. Skips
// when the plugins are not built (targets beat_vq and synthetic).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "hlm/dataset.h"
#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/beat_shape_descriptors.h"
#include "hlm/dsp/p_wave_reference.h"
#include "hlm/dsp/rr_features.h"
#include "hlm/dsp/synthetic_ecg.h"
#include "hlm/dsp/template_descriptors.h"
#include "hlm/errors.h"
#include "hlm/tokenizer.h"
#include "plugin/plugin_host.h"

namespace {
std::string plugin_file(const std::string& target) {
  return std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_" + target + ".so";
}

class BeatVq : public ::testing::Test {
 protected:
  void SetUp() override {
    // Build dependencies of this test: missing, they are a failure, never a skip.
    for (const char* target : {"beat_vq", "synthetic"})
      ASSERT_TRUE(std::filesystem::exists(plugin_file(target))) << plugin_file(target);
    host_.load_library(plugin_file("beat_vq"));
    host_.load_library(plugin_file("synthetic"));
    dataset_ = host_.create<hlm::Dataset>("dataset", "synthetic",
                                          {{"records", 3}, {"seconds", 90.0}, {"seed", 5}});
  }
  std::shared_ptr<hlm::Tokenizer> tokenizer(nlohmann::json params = {{"codes", 16}}) {
    return host_.create<hlm::Tokenizer>("tokenizer", "beat-vq", params);
  }
  hlm::PluginHost host_;
  std::shared_ptr<hlm::Dataset> dataset_;
};
}  // namespace

TEST_F(BeatVq, ExtractsOneLabelledWindowPerDetectedBeat) {
  const hlm::Record rec = dataset_->read("syn000");
  const hlm::Beats b = tokenizer()->extract(rec);
  int annotated = 0, pvcs = 0;
  for (const auto& a : rec.annotations) annotated += hlm::is_beat_code(a.code), pvcs += a.code == 5;
  EXPECT_NEAR(double(b.size()), annotated, 2.0);  // windows at the record's ends may not fit
  EXPECT_EQ(b.feature_dim, 64);
  EXPECT_EQ(b.features.size(), b.size() * 64);
  ASSERT_EQ(b.labels.size(), b.size());
  ASSERT_EQ(b.rr_seconds.size(), b.size());
  EXPECT_EQ(std::count(b.labels.begin(), b.labels.end(), uint8_t(hlm::BeatClass::kV)), pvcs);
  EXPECT_EQ(std::count(b.labels.begin(), b.labels.end(), uint8_t(hlm::BeatClass::kNone)), 0);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_GT(b.rr_seconds[i], 0.25f) << i;
}

TEST_F(BeatVq, FitsACodebookAndAssignsTokensInsideTheVocabulary) {
  auto t = tokenizer();
  EXPECT_EQ(t->vocab_size(), 16u + hlm::kFirstContentToken);
  EXPECT_TRUE(t->needs_fit());
  std::vector<hlm::Beats> beats;
  for (const auto& name : dataset_->records()) beats.push_back(t->extract(dataset_->read(name)));
  t->fit({&beats[0], &beats[1]});
  EXPECT_FALSE(t->needs_fit());
  t->assign(beats[2]);
  ASSERT_EQ(beats[2].tokens.size(), beats[2].size());
  for (uint32_t tok : beats[2].tokens) {
    EXPECT_GE(tok, hlm::kFirstContentToken);
    EXPECT_LT(tok, t->vocab_size());
  }
}

TEST_F(BeatVq, SavedCodebookReloadsToTheSameTokensAndIdentity) {
  auto t = tokenizer();
  const std::string before = t->identity();
  hlm::Beats b = t->extract(dataset_->read("syn001"));
  t->fit({&b});
  EXPECT_EQ(t->identity().rfind("beat-vq:", 0), 0u);
  EXPECT_NE(t->identity(), before);
  const std::string path =
      (std::filesystem::temp_directory_path() / "hlm_beat_vq_test.cb").string();
  t->save_state(path);
  hlm::Beats again = b;
  t->assign(b);
  auto loaded = tokenizer({{"codes", 16}, {"codebook", path}});
  EXPECT_FALSE(loaded->needs_fit());
  loaded->assign(again);
  EXPECT_EQ(again.tokens, b.tokens);
  EXPECT_EQ(loaded->identity(), t->identity());
  EXPECT_THROW(tokenizer({{"codes", 32}, {"codebook", path}}), hlm::PluginError);
  std::remove(path.c_str());
}

TEST_F(BeatVq, RefusesARecordWithoutTheRequestedLead) {
  auto t = tokenizer({{"codes", 16}, {"lead", 5}});
  EXPECT_THROW(t->extract(dataset_->read("syn000")), hlm::DataError);
}

TEST_F(BeatVq, LeadNamesPickTheSignalTheHeaderNamesBeforeTheLeadIndex) {
  // The synthetic records name their signals "synthetic MLII" (0) and "synthetic V1" (1).
  const hlm::Record rec = dataset_->read("syn000");
  ASSERT_EQ(rec.signals.at(1).description, "synthetic V1");
  const hlm::Beats by_index = tokenizer({{"codes", 16}, {"lead", 1}})->extract(rec);
  const hlm::Beats first = tokenizer({{"codes", 16}})->extract(rec);
  ASSERT_NE(by_index.features, first.features);
  auto named = tokenizer({{"codes", 16}, {"lead_names", {"absent", "synthetic V1"}}});
  EXPECT_EQ(named->extract(rec).features, by_index.features);
  EXPECT_NE(named->identity(), tokenizer({{"codes", 16}})->identity());
  // The name wins over an index the record does not have.
  EXPECT_EQ(tokenizer({{"codes", 16}, {"lead", 5}, {"lead_names", {"synthetic V1"}}})
                ->extract(rec)
                .features,
            by_index.features);
  // No name matches: `lead` is used, and a missing one is refused naming both.
  EXPECT_EQ(tokenizer({{"codes", 16}, {"lead_names", {"absent"}}})->extract(rec).features,
            first.features);
  try {
    tokenizer({{"codes", 16}, {"lead", 5}, {"lead_names", {"absent"}}})->extract(rec);
    FAIL() << "lead 5 of a two-lead record was accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("lead=5 and none named absent"), std::string::npos)
        << e.what();
  }
}

TEST_F(BeatVq, SyntheticDatasetNamesItsRecordsAndRegeneratesThemIdentically) {
  EXPECT_EQ(dataset_->records(), (std::vector<std::string>{"syn000", "syn001", "syn002"}));
  EXPECT_EQ(dataset_->read("syn002").digital, dataset_->read("syn002").digital);
  EXPECT_NE(dataset_->read("syn000").digital, dataset_->read("syn001").digital);
  auto other = host_.create<hlm::Dataset>("dataset", "synthetic",
                                          {{"records", 3}, {"seconds", 90.0}, {"seed", 6}});
  EXPECT_NE(other->fingerprint(), dataset_->fingerprint());
  EXPECT_THROW(dataset_->read("syn009"), hlm::DataError);
}

TEST_F(BeatVq, BeatsTouchingInvalidSamplesBecomeUnk) {
  hlm::Record rec = dataset_->read("syn001");
  const int64_t from = int64_t(30 * rec.sampling_hz), to = int64_t(33 * rec.sampling_hz);
  for (int64_t i = from; i < to; ++i) rec.digital[0][i] = hlm::kInvalidSample;
  // Lead 1 still shows the beats in lead 0's gap: detecting on both leads finds them, and
  // their windows on lead 0 cannot be tokenized.
  auto t = tokenizer({{"codes", 16}, {"detect_all_leads", true}});
  hlm::Beats b = t->extract(rec);
  t->fit({&b});
  t->assign(b);
  int unk = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    // Windows reach 0.25 s back and 0.40 s forward from the R peak.
    const bool touches = b.positions[i] + int64_t(0.4 * rec.sampling_hz) + 1 >= from &&
                         b.positions[i] - int64_t(0.25 * rec.sampling_hz) - 1 < to;
    if (b.tokens[i] == hlm::kUnk) ++unk;
    if (!touches) {
      EXPECT_GE(b.tokens[i], hlm::kFirstContentToken) << "beat " << i;
    }
  }
  EXPECT_GE(unk, 3);  // about 3 s of beats
}

// shape relative: each beat becomes its RR features and its window against its record's
// template, so the PVCs of the synthetic records stand out from the sinus beats.
TEST_F(BeatVq, RelativeShapeDescribesEachBeatAgainstItsOwnRecord) {
  auto t = tokenizer({{"codes", 16}, {"shape", "relative"}});
  EXPECT_NE(t->identity(), tokenizer()->identity());
  const hlm::Record rec = dataset_->read("syn000");
  const hlm::Beats b = t->extract(rec);
  ASSERT_EQ(b.feature_dim, hlm::kRrFeatureCount + hlm::kMorphologyFeatureCount);
  ASSERT_EQ(b.features.size(), b.size() * size_t(b.feature_dim));
  // Means per class: RR before against the local average, distance to the template.
  double sum[2][2] = {}, count[2] = {};
  for (size_t i = 0; i < b.size(); ++i) {
    const int v = b.labels[i] == uint8_t(hlm::BeatClass::kV);
    if (!v && b.labels[i] != uint8_t(hlm::BeatClass::kN)) continue;
    const float* f = &b.features[i * size_t(b.feature_dim)];
    sum[v][0] += f[0], sum[v][1] += f[hlm::kRrFeatureCount], count[v] += 1;
  }
  ASSERT_GT(count[1], 0) << "syn000 has no PVC";
  EXPECT_LT(sum[1][0] / count[1], sum[0][0] / count[0] - 0.1);  // premature
  EXPECT_GT(sum[1][1] / count[1], sum[0][1] / count[0] + 1.0);  // unlike the usual beat
  // A codebook of windows does not fit relative shapes.
  auto windows = tokenizer();
  std::vector<hlm::Beats> beats = {windows->extract(rec)};
  windows->fit({&beats[0]});
  const std::string path =
      (std::filesystem::temp_directory_path() / "hlm_beat_vq_window_codebook.bin").string();
  windows->save_state(path);
  EXPECT_THROW(t->load_state(path), hlm::CheckpointError);
  std::remove(path.c_str());
  // The host wraps the plugin's ConfigError; the message still names the choices.
  try {
    tokenizer({{"shape", "relatve"}});
    ADD_FAILURE() << "shape relatve accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'relative'"), std::string::npos) << e.what();
  }
}

TEST_F(BeatVq, TemplateDescriptorsRideWithTheTokensWithoutChangingThem) {
  const hlm::Record rec = dataset_->read("syn000");
  for (const char* shape : {"window", "relative"}) {
    SCOPED_TRACE(shape);
    auto plain = tokenizer({{"codes", 16}, {"shape", shape}});
    auto described = tokenizer({{"codes", 16}, {"shape", shape}, {"template_descriptors", true}});
    // The tokens, so the identity a checkpoint is matched on, stay the same.
    EXPECT_EQ(described->identity(), plain->identity());
    EXPECT_TRUE(plain->descriptor_names().empty());
    ASSERT_EQ(described->descriptor_names().size(), size_t(hlm::kTemplateDescriptorCount));
    const hlm::Beats a = plain->extract(rec), b = described->extract(rec);
    EXPECT_TRUE(a.descriptors.empty());
    ASSERT_EQ(b.descriptors.size(), b.size() * size_t(hlm::kTemplateDescriptorCount));
    EXPECT_EQ(b.features, a.features);
    // A PVC correlates less with its template than a normal beat does.
    double corr[2] = {}, count[2] = {};
    for (size_t i = 0; i < b.size(); ++i) {
      const int v = b.labels[i] == uint8_t(hlm::BeatClass::kV);
      if (!v && b.labels[i] != uint8_t(hlm::BeatClass::kN)) continue;
      corr[v] += b.descriptors[i * hlm::kTemplateDescriptorCount + 7], count[v] += 1;
    }
    ASSERT_GT(count[1], 0) << "syn001 has no PVC";
    EXPECT_LT(corr[1] / count[1], corr[0] / count[0] - 0.1);
  }
  try {
    tokenizer({{"template_descriptors", true}, {"window_after_s", 0.3}});
    ADD_FAILURE() << "a window too short for the T wave accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("template_descriptors"), std::string::npos) << e.what();
  }
  try {
    tokenizer({{"template_descriptors", true}, {"points", 2}});
    ADD_FAILURE() << "windows of 2 points accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("at least 3 points"), std::string::npos) << e.what();
  }
}

TEST_F(BeatVq, ShapeDescriptorsFollowTheTemplateDescriptorsAndLeaveTheTokensAlone) {
  const hlm::Record rec = dataset_->read("syn001");
  const int points = 8, shape = hlm::beat_shape_descriptor_count(points);
  auto described =
      tokenizer({{"codes", 16}, {"shape", "relative"}, {"template_descriptors", true}});
  auto shaped = tokenizer({{"codes", 16},
                           {"shape", "relative"},
                           {"template_descriptors", true},
                           {"shape_descriptors", points}});
  EXPECT_EQ(shaped->identity(), described->identity());
  const auto names = shaped->descriptor_names();
  ASSERT_EQ(names.size(), size_t(hlm::kTemplateDescriptorCount + shape));
  EXPECT_EQ(names[hlm::kTemplateDescriptorCount], "beat at -0.250 s / template QRS");
  const hlm::Beats a = described->extract(rec), b = shaped->extract(rec);
  EXPECT_EQ(b.features, a.features);
  const size_t width = names.size();
  ASSERT_EQ(b.descriptors.size(), b.size() * width);
  // Each beat: its template descriptors first, as without the shape, then its shape.
  const auto alone = tokenizer({{"codes", 16}, {"shape_descriptors", points}})->extract(rec);
  ASSERT_EQ(alone.descriptors.size(), b.size() * size_t(shape));
  for (size_t i = 0; i < b.size(); ++i) {
    for (int j = 0; j < hlm::kTemplateDescriptorCount; ++j)
      ASSERT_EQ(b.descriptors[i * width + size_t(j)],
                a.descriptors[i * size_t(hlm::kTemplateDescriptorCount) + size_t(j)]);
    for (int j = 0; j < shape; ++j)
      ASSERT_EQ(b.descriptors[i * width + size_t(hlm::kTemplateDescriptorCount + j)],
                alone.descriptors[i * size_t(shape) + size_t(j)]);
  }
  for (int bad : {1, 65}) {
    try {
      tokenizer({{"shape_descriptors", bad}});
      ADD_FAILURE() << "shape_descriptors=" << bad << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("shape_descriptors"), std::string::npos) << e.what();
    }
  }
}

// shape_descriptor_leads: 2 puts the second lead's shape after the first's, cut at the same R
// peaks: a second lead that copies the first gives the same values, and one at twice the gain
// gives them too (they are measured against the template's QRS).
TEST_F(BeatVq, ShapeDescriptorsOfASecondLeadAreCutAtTheSamePeaks) {
  const int points = 8, shape = hlm::beat_shape_descriptor_count(points);
  auto both =
      tokenizer({{"codes", 16}, {"shape_descriptors", points}, {"shape_descriptor_leads", 2}});
  const auto names = both->descriptor_names();
  ASSERT_EQ(names.size(), size_t(2 * shape));
  EXPECT_EQ(names[size_t(shape) + 1], names[1] + ", lead 2");
  hlm::Record rec = dataset_->read("syn001");
  const hlm::Beats one = tokenizer({{"codes", 16}, {"shape_descriptors", points}})->extract(rec);
  const hlm::Beats two = both->extract(rec);
  ASSERT_EQ(two.positions, one.positions);
  ASSERT_EQ(two.descriptors.size(), two.size() * size_t(2 * shape));
  bool lead_2_differs = false;
  for (size_t i = 0; i < two.size(); ++i)
    for (int j = 0; j < shape; ++j) {
      ASSERT_EQ(two.descriptors[i * 2 * shape + size_t(j)], one.descriptors[i * shape + size_t(j)]);
      lead_2_differs |= two.descriptors[i * 2 * shape + size_t(shape + j)] !=
                        one.descriptors[i * shape + size_t(j)];
    }
  EXPECT_TRUE(lead_2_differs);
  const int baseline = rec.signals[0].baseline;
  rec.signals[1] = rec.signals[0];
  for (const int scale : {1, 2}) {
    for (size_t i = 0; i < rec.digital[0].size(); ++i)
      rec.digital[1][i] = scale * (rec.digital[0][i] - baseline) + baseline;
    const hlm::Beats copied = both->extract(rec);
    for (size_t i = 0; i < copied.size(); ++i)
      for (int j = 0; j < shape; ++j)
        ASSERT_NEAR(copied.descriptors[i * 2 * shape + size_t(shape + j)],
                    copied.descriptors[i * 2 * shape + size_t(j)], scale == 1 ? 0.0 : 1e-4)
            << "scale " << scale << " beat " << i << " value " << j;
  }
  // Samples invalid on the second lead alone: the beat there gets no difference on it (its
  // template's shape) and keeps its own on the first lead.
  const hlm::Beats before = both->extract(rec);
  const size_t hit = before.size() / 2;
  const int64_t r = before.positions[hit];
  for (int64_t i = r - 10; i <= r + 10; ++i) rec.digital[1][size_t(i)] = hlm::kInvalidSample;
  const hlm::Beats invalid = both->extract(rec);
  ASSERT_EQ(invalid.positions, before.positions);
  double first_lead = 0, second_lead = 0;
  for (int j = points; j < shape; ++j) {  // the "beat minus template" half
    first_lead += std::abs(invalid.descriptors[hit * 2 * shape + size_t(j)]);
    second_lead += std::abs(invalid.descriptors[hit * 2 * shape + size_t(shape + j)]);
  }
  EXPECT_GT(first_lead, 0.0);
  EXPECT_EQ(second_lead, 0.0);
  // A record with one signal is refused, naming it; the key needs shape_descriptors.
  rec.digital.pop_back();
  rec.signals.pop_back();
  try {
    both->extract(rec);
    ADD_FAILURE() << "a one-lead record was accepted";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("record 'syn001'"), std::string::npos) << e.what();
  }
  EXPECT_ANY_THROW(tokenizer({{"codes", 16}, {"shape_descriptor_leads", 2}}));
}

// p_wave_descriptors: one column per shape lead after every other descriptor, the others
// unchanged, correlations in [-1, 1]; a window that does not reach the P wave is refused.
TEST_F(BeatVq, PWaveDescriptorsFollowTheShapesOnePerLead) {
  const int points = 8, shape = hlm::beat_shape_descriptor_count(points), width = 2 * shape + 2;
  const nlohmann::json shapes = {
      {"codes", 16}, {"shape_descriptors", points}, {"shape_descriptor_leads", 2}};
  nlohmann::json with = shapes;
  with["p_wave_descriptors"] = true;
  const auto names = tokenizer(with)->descriptor_names();
  ASSERT_EQ(names.size(), size_t(width));
  EXPECT_EQ(names[size_t(2 * shape)], hlm::late_p_wave_descriptor_name(0));
  EXPECT_EQ(names[size_t(2 * shape + 1)], hlm::late_p_wave_descriptor_name(0) + ", lead 2");
  const hlm::Record rec = dataset_->read("syn001");
  const hlm::Beats plain = tokenizer(shapes)->extract(rec), b = tokenizer(with)->extract(rec);
  ASSERT_EQ(b.positions, plain.positions);
  ASSERT_EQ(b.descriptors.size(), b.size() * size_t(width));
  int below_one = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (int j = 0; j < 2 * shape; ++j)
      ASSERT_EQ(b.descriptors[i * width + size_t(j)], plain.descriptors[i * 2 * shape + size_t(j)]);
    for (int lead = 0; lead < 2; ++lead) {
      const float r = b.descriptors[i * width + size_t(2 * shape + lead)];
      ASSERT_TRUE(r >= -1.0f && r <= 1.0f) << "beat " << i << " lead " << lead << ": " << r;
      below_one += r < 0.999f;
    }
  }
  EXPECT_GT(below_one, 0);
  // Alone, one column: the tokenized lead's, the same values.
  const hlm::Beats alone = tokenizer({{"codes", 16}, {"p_wave_descriptors", true}})->extract(rec);
  ASSERT_EQ(alone.descriptors.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i)
    ASSERT_EQ(alone.descriptors[i], b.descriptors[i * width + size_t(2 * shape)]) << i;
  try {
    tokenizer({{"codes", 16}, {"p_wave_descriptors", true}, {"window_before_s", 0.2}});
    ADD_FAILURE() << "a window short of the P wave was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("p_wave_descriptors"), std::string::npos) << e.what();
  }
}

// With lead_names picking the second signal and the template descriptors on, the columns are:
// the tokenized lead's template descriptors and shape (as a one-lead extraction of it), then
// the other signal's shape.
TEST_F(BeatVq, OtherLeadShapesFollowTheTemplateDescriptorsOfALeadPickedByName) {
  const int points = 8, shape = hlm::beat_shape_descriptor_count(points);
  const int own = hlm::kTemplateDescriptorCount + shape, width = own + shape;
  const hlm::Record rec = dataset_->read("syn002");
  const hlm::Beats one = tokenizer({{"codes", 16},
                                    {"lead", 1},
                                    {"template_descriptors", true},
                                    {"shape_descriptors", points}})
                             ->extract(rec);
  auto both = tokenizer({{"codes", 16},
                         {"lead_names", {"synthetic V1"}},
                         {"template_descriptors", true},
                         {"shape_descriptors", points},
                         {"shape_descriptor_leads", 2}});
  ASSERT_EQ(both->descriptor_names().size(), size_t(width));
  const hlm::Beats two = both->extract(rec);
  ASSERT_EQ(two.positions, one.positions);
  ASSERT_EQ(two.descriptors.size(), two.size() * size_t(width));
  for (size_t i = 0; i < two.size(); ++i)
    for (int j = 0; j < own; ++j)
      ASSERT_EQ(two.descriptors[i * width + size_t(j)], one.descriptors[i * own + size_t(j)])
          << "beat " << i << " column " << j;
}

// align_max_shift_s changes where beats are cut (so the tokens' identity), moves no beat
// further than its bound and keeps them in order; values outside 0-0.1 s are refused.
TEST_F(BeatVq, AlignedPeaksStayWithinTheirBoundAndNameThemselvesInTheIdentity) {
  const hlm::Record rec = dataset_->read("syn002");
  auto plain = tokenizer({{"codes", 16}, {"shape", "relative"}});
  auto aligned = tokenizer({{"codes", 16}, {"shape", "relative"}, {"align_max_shift_s", 0.05}});
  EXPECT_NE(aligned->identity(), plain->identity());
  EXPECT_EQ(
      tokenizer({{"codes", 16}, {"shape", "relative"}, {"align_max_shift_s", 0.0}})->identity(),
      plain->identity());
  const hlm::Beats a = plain->extract(rec), b = aligned->extract(rec);
  ASSERT_EQ(b.size(), a.size());
  const int64_t bound = std::lround(0.05 * rec.sampling_hz);
  int moved = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_LE(std::abs(b.positions[i] - a.positions[i]), bound) << i;
    moved += b.positions[i] != a.positions[i];
    if (i > 0) {
      EXPECT_GT(b.positions[i], b.positions[i - 1]) << i;
      EXPECT_FLOAT_EQ(b.rr_seconds[i],
                      float(double(b.positions[i] - b.positions[i - 1]) / rec.sampling_hz));
    }
  }
  EXPECT_GT(moved, 0);  // the key acts
  EXPECT_EQ(b.labels, a.labels);
  for (double bad : {-0.01, 0.2}) {
    try {
      tokenizer({{"align_max_shift_s", bad}});
      ADD_FAILURE() << "align_max_shift_s=" << bad << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("align_max_shift_s"), std::string::npos) << e.what();
    }
  }
}

// template_beats timely: in bigeminy half of a beat's 100 neighbours are ventricular, so the
// median of all of them (101 beats, 51 of the beat's own kind) is the beat's own kind, and the
// ventricular beats look as typical as the normal ones. With the premature beats left out, the
// template is the normal beat, and the ventricular beats stand apart from it. The key names
// itself in the identity, and other values are refused.
TEST_F(BeatVq, TimelyTemplatesSetVentricularBeatsOfABigeminyApart) {
  hlm::dsp::SyntheticEcgOptions options;
  options.seconds = 150;
  options.seed = 3;
  options.pvc_every = 2;
  const hlm::Record rec = hlm::dsp::synthesize_ecg("bigeminy", options);
  auto all = tokenizer({{"codes", 16}, {"shape", "relative"}});
  auto timely = tokenizer({{"codes", 16}, {"shape", "relative"}, {"template_beats", "timely"}});
  EXPECT_NE(timely->identity(), all->identity());
  EXPECT_EQ(
      tokenizer({{"codes", 16}, {"shape", "relative"}, {"template_beats", "all"}})->identity(),
      all->identity());
  const hlm::Beats a = all->extract(rec), t = timely->extract(rec);
  ASSERT_EQ(a.size(), t.size());
  // Mean log distance to the template (relative to its size) of one class's beats, away from
  // the record's ends (there the window holds fewer than 100 neighbours).
  const auto mean_distance = [](const hlm::Beats& b, hlm::BeatClass c) {
    double sum = 0;
    int count = 0;
    for (size_t i = 60; i + 60 < b.size(); ++i)
      if (b.labels[i] == uint8_t(c))
        sum += b.features[i * size_t(b.feature_dim) + hlm::kRrFeatureCount], ++count;
    return count ? sum / count : std::nan("");
  };
  const double v_all = mean_distance(a, hlm::BeatClass::kV);
  const double v_timely = mean_distance(t, hlm::BeatClass::kV);
  const double n_timely = mean_distance(t, hlm::BeatClass::kN);
  EXPECT_LT(v_all, mean_distance(a, hlm::BeatClass::kN) + 0.5) << "V beats typical with all";
  EXPECT_GT(v_timely, v_all + 1.0);
  EXPECT_GT(v_timely, n_timely + 1.0);
  try {
    tokenizer({{"template_beats", "normal"}});
    ADD_FAILURE() << "template_beats=normal accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("template_beats"), std::string::npos) << e.what();
  }
}
