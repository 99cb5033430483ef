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
