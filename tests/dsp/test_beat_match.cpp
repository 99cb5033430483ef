// bxb-style matching of detections against reference beats, and label transfer.
#include <gtest/gtest.h>

#include "hlm/dsp/beat_match.h"

using hlm::dsp::match_beats;

TEST(DspBeatMatch, CountsMatchesWithinTheWindowOnly) {
  const auto c = match_beats({100, 500, 900}, {110, 560, 1500}, 54);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.fn, 2);
  EXPECT_EQ(c.fp, 2);
  EXPECT_DOUBLE_EQ(c.sensitivity(), 1.0 / 3.0);
}

TEST(DspBeatMatch, GivesEachReferenceBeatAtMostOneDetection) {
  const auto c = match_beats({1000}, {990, 1005, 1030}, 54);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.fp, 2);
  const auto pair = hlm::dsp::pair_beats({1000}, {990, 1005, 1030}, 54);
  EXPECT_EQ(pair, (std::vector<int64_t>{-1, 0, -1}));  // the closest one wins
}

TEST(DspBeatMatch, PairsADetectionWithTheCloserOfTwoReferenceBeats) {
  const auto pair = hlm::dsp::pair_beats({1000, 1080}, {1070}, 54);
  EXPECT_EQ(pair, (std::vector<int64_t>{1}));
}

TEST(DspBeatMatch, MatchWindowIs150MillisecondsByDefault) {
  EXPECT_EQ(hlm::dsp::match_window_samples(360.0), 54);
  EXPECT_EQ(hlm::dsp::match_window_samples(1000.0), 150);
}

TEST(DspBeatMatch, LabelsDetectionsWithTheAamiClassOfTheMatchedBeat) {
  std::vector<hlm::Annotation> ann(5);
  ann[0].sample = 100, ann[0].code = 1;    // N
  ann[1].sample = 400, ann[1].code = 28;   // rhythm change: not a beat
  ann[2].sample = 420, ann[2].code = 5;    // V
  ann[3].sample = 800, ann[3].code = 8;    // A -> S
  ann[4].sample = 1200, ann[4].code = 13;  // Q
  const auto labels = hlm::dsp::label_beats({95, 410, 805, 1000, 1190}, ann, 54);
  using B = hlm::BeatClass;
  const std::vector<uint8_t> want = {uint8_t(B::kN), uint8_t(B::kV), uint8_t(B::kS),
                                     uint8_t(B::kNone), uint8_t(B::kQ)};
  EXPECT_EQ(labels, want);
  EXPECT_EQ(hlm::dsp::reference_beats(ann), (std::vector<int64_t>{100, 420, 800, 1200}));
}

namespace {
hlm::Annotation annotation(int64_t sample, uint8_t code) {
  hlm::Annotation a;
  a.sample = sample, a.code = code;
  return a;
}
}  // namespace

TEST(DspBeatMatch, ComparesNothingInsideAVentricularFlutterEpisodeAsEc57Does) {
  // N beats, then '[' flutter waves '!' ']' and N beats again; a detection inside the episode
  // (895, before its end at 900) pairs with the beat after it (920), two others inside it pair
  // with nothing, and a false one lies after it.
  const std::vector<hlm::Annotation> ann = {
      annotation(100, 1),  annotation(500, 1),  annotation(600, 32), annotation(650, 31),
      annotation(750, 31), annotation(850, 31), annotation(900, 33), annotation(920, 1),
      annotation(1300, 5), annotation(1700, 1)};
  const std::vector<int64_t> detected = {102, 640, 760, 895, 1305, 1500};
  const auto c = hlm::dsp::compare_beats(ann, detected, 54);
  EXPECT_EQ(c.vf_reference, 3);  // the flutter waves
  EXPECT_EQ(c.vf_detected, 2);   // 640 and 760: the flutter waves they fall on are not scored
  EXPECT_EQ(c.counts.tp, 3);     // 100, 920 (by 895, inside the episode), 1300
  EXPECT_EQ(c.counts.fn, 2);     // 500 and 1700
  EXPECT_EQ(c.counts.fp, 1);     // 1500
  EXPECT_EQ(c.missed, (std::vector<size_t>{1, 9}));
  EXPECT_EQ(c.false_detected, (std::vector<int64_t>{1500}));
}

TEST(DspBeatMatch, AnEpisodeWithoutItsEndRunsToTheRecordsEnd) {
  const std::vector<hlm::Annotation> ann = {annotation(100, 1), annotation(300, 32),
                                            annotation(400, 31), annotation(5000, 1)};
  const auto c = hlm::dsp::compare_beats(ann, {100, 2000, 5000}, 54);
  EXPECT_EQ(c.vf_reference, 2);
  EXPECT_EQ(c.vf_detected, 2);
  EXPECT_EQ(c.counts.tp, 1);
  EXPECT_EQ(c.counts.fn + c.counts.fp, 0);
}

TEST(DspBeatMatch, WithoutVfEpisodesTheComparisonIsTheMatch) {
  std::vector<hlm::Annotation> ann;
  for (int64_t s : {100, 500, 900}) ann.push_back(annotation(s, 1));
  ann.push_back(annotation(950, 28));  // a rhythm change: not a beat
  const std::vector<int64_t> detected = {110, 560, 1500};
  const auto c = hlm::dsp::compare_beats(ann, detected, 54);
  const auto m = match_beats({100, 500, 900}, detected, 54);
  EXPECT_EQ(c.counts.tp, m.tp);
  EXPECT_EQ(c.counts.fn, m.fn);
  EXPECT_EQ(c.counts.fp, m.fp);
  EXPECT_EQ(c.vf_reference + c.vf_detected, 0);
}
