// Beats aligned to their record's template: a detector's mark that lands on the S wave of some
// beats and the R wave of others is moved onto one fiducial at any sampling rate, moves stay
// within their bound and never reorder beats, and a flat lead, a dead QRS or a zero bound
// moves nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "hlm/dsp/fiducial_alignment.h"

namespace {

constexpr double kBeatSeconds = 0.8, kSDelaySeconds = 0.04;

double gaussian(double t, double centre, double width) {
  return std::exp(-0.5 * std::pow((t - centre) / width, 2));
}

// A lead of `beats` beats, one every 0.8 s from 1 s on: an R wave, an S wave almost as deep
// 40 ms after it (a QRS like V5's, where a detector's mark can land on either) and a T wave.
std::vector<float> lead(double fs, int beats) {
  std::vector<float> x(size_t((1.0 + beats * kBeatSeconds + 1.0) * fs));
  for (size_t k = 0; k < x.size(); ++k) {
    const double t = double(k) / fs;
    double v = 0;
    for (int b = 0; b < beats; ++b) {
      const double r = 1.0 + b * kBeatSeconds;
      if (std::abs(t - r) > 0.5) continue;
      v += gaussian(t, r, 0.008) - 0.9 * gaussian(t, r + kSDelaySeconds, 0.008) +
           0.25 * gaussian(t, r + 0.3, 0.04);
    }
    x[k] = float(v);
  }
  return x;
}

int64_t r_wave(double fs, int beat) { return std::lround((1.0 + beat * kBeatSeconds) * fs); }

// The detector's marks: on the R wave, but on the S wave for every fourth beat.
std::vector<int64_t> jittered_marks(double fs, int beats) {
  std::vector<int64_t> marks;
  for (int b = 0; b < beats; ++b)
    marks.push_back(r_wave(fs, b) + (b % 4 == 3 ? std::lround(kSDelaySeconds * fs) : 0));
  return marks;
}

}  // namespace

TEST(FiducialAlignment, MarksOnTheSWaveMoveToTheRWaveAtAnySamplingRate) {
  for (double fs : {128.0, 360.0, 1000.0}) {
    const int beats = 60;
    const auto x = lead(fs, beats);
    const auto aligned =
        hlm::dsp::align_r_peaks(x.data(), x.size(), fs, jittered_marks(fs, beats), 0.05);
    ASSERT_EQ(aligned.size(), size_t(beats));
    int moved = 0;
    for (int b = 0; b < beats; ++b) {
      EXPECT_LE(std::abs(aligned[size_t(b)] - r_wave(fs, b)), 1) << "fs " << fs << " beat " << b;
      moved += aligned[size_t(b)] != jittered_marks(fs, beats)[size_t(b)];
    }
    EXPECT_GE(moved, beats / 4 - 1) << fs;  // the S-wave marks (one may sit too near an end)
  }
}

TEST(FiducialAlignment, MovesStayWithinTheirBoundAndKeepTheBeatsInOrder) {
  const double fs = 360;
  const int beats = 40;
  const auto x = lead(fs, beats);
  const auto marks = jittered_marks(fs, beats);
  // 20 ms cannot reach the R wave 40 ms away: the S-wave marks move by at most 7 samples.
  const auto short_moves = hlm::dsp::align_r_peaks(x.data(), x.size(), fs, marks, 0.02);
  for (size_t i = 0; i < marks.size(); ++i) EXPECT_LE(std::abs(short_moves[i] - marks[i]), 7);
  EXPECT_EQ(hlm::dsp::align_r_peaks(x.data(), x.size(), fs, marks, 0.0), marks);
  // Two marks 20 ms apart (a double detection) stay apart and in order.
  std::vector<int64_t> doubled = marks;
  doubled.insert(doubled.begin() + 11, marks[10] + 7);
  const auto kept = hlm::dsp::align_r_peaks(x.data(), x.size(), fs, doubled, 0.05);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1], kept[i]) << i;
}

TEST(FiducialAlignment, AFlatLeadOrMarksAtItsEndsStayWhereTheyAre) {
  const double fs = 250;
  const std::vector<float> flat(size_t(30 * fs), 0.5f);
  const std::vector<int64_t> marks = {5, 250, 500, 750, 1000, int64_t(flat.size()) - 3};
  EXPECT_EQ(hlm::dsp::align_r_peaks(flat.data(), flat.size(), fs, marks, 0.05), marks);
  const auto x = lead(fs, 10);
  const std::vector<int64_t> at_ends = {2, int64_t(x.size()) - 2};
  EXPECT_EQ(hlm::dsp::align_r_peaks(x.data(), x.size(), fs, at_ends, 0.05), at_ends);
  EXPECT_TRUE(hlm::dsp::align_r_peaks(x.data(), x.size(), fs, {}, 0.05).empty());
  // A beat whose QRS is a dead (constant) stretch has nothing to match: it stays, although
  // windows a few samples off would correlate with something.
  auto dead = lead(fs, 10);
  const auto marks_of_ten = jittered_marks(fs, 10);
  const int64_t half = std::lround(0.08 * fs);
  for (int64_t k = marks_of_ten[5] - half; k <= marks_of_ten[5] + half; ++k) dead[size_t(k)] = 0;
  EXPECT_EQ(hlm::dsp::align_r_peaks(dead.data(), dead.size(), fs, marks_of_ten, 0.05)[5],
            marks_of_ten[5]);
}
