// Beat shapes against their record's template: a record's usual beat reads as typical at any
// amplitude, an ectopic beat among them as different (mostly within the QRS for a wide one,
// by its amplitude for a scaled one), and codebooks that are not beat windows are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/kmeans.h"
#include "hlm/errors.h"

namespace {

constexpr int kPoints = 64;
const std::string kMetadata =
    R"(beat-vq {"points":64,"window_before_s":0.25,"window_after_s":0.4})";

// A beat window: a QRS of the given width (seconds) and height at the R peak (0.25 s into
// the 0.65 s window), and a T wave 0.25 s after it.
std::vector<float> beat(double qrs_width, double height) {
  std::vector<float> w(kPoints);
  for (int j = 0; j < kPoints; ++j) {
    const double t = j * 0.65 / (kPoints - 1) - 0.25;
    w[size_t(j)] = float(height * std::exp(-0.5 * std::pow(t / (qrs_width / 4), 2)) +
                         0.2 * std::exp(-0.5 * std::pow((t - 0.25) / 0.04, 2)));
  }
  return w;
}

hlm::dsp::Codebook codebook(const std::vector<std::vector<float>>& shapes) {
  hlm::dsp::Codebook cb;
  cb.dim = kPoints;
  for (const auto& s : shapes) cb.centroids.insert(cb.centroids.end(), s.begin(), s.end());
  return cb;
}

const float* at(const std::vector<float>& f, size_t beat) {
  return f.data() + beat * hlm::kMorphologyFeatureCount;
}

}  // namespace

TEST(BeatMorphology, TheLayoutPlacesTheQrsAroundTheRPeak) {
  const auto layout = hlm::codebook_shape_layout(kMetadata, kPoints, "cb.bin");
  // R at 0.25 s of 0.65 s over 63 steps: point 24.2; +-80 ms is +-7.8 points: 16.5 to 32.0,
  // so points 17 to 31.
  EXPECT_EQ(layout.points, kPoints);
  EXPECT_EQ(layout.qrs_first, 17);
  EXPECT_EQ(layout.qrs_end, 32);
}

TEST(BeatMorphology, ARecordsUsualBeatIsTypicalAtAnyAmplitude) {
  const auto layout = hlm::codebook_shape_layout(kMetadata, kPoints, "cb.bin");
  for (double height : {0.3, 1.0, 3.0}) {
    const auto cb = codebook({beat(0.08, height)});
    const auto f =
        hlm::relative_morphology(cb.centroids.data(), layout, std::vector<int64_t>(30, 0));
    for (size_t i = 0; i < 30; ++i) {
      EXPECT_NEAR(at(f, i)[0], std::log(0.01), 1e-4);
      EXPECT_NEAR(at(f, i)[1], 1.0, 1e-5);
      EXPECT_NEAR(at(f, i)[2], 0.0, 1e-5);
    }
  }
}

TEST(BeatMorphology, AWideBeatAmongNarrowOnesDiffersMostlyInItsQrs) {
  const auto layout = hlm::codebook_shape_layout(kMetadata, kPoints, "cb.bin");
  // Rows: 0 a patient's normal beat, 1 a wide ventricular beat, 2 the normal beat twice as tall.
  const auto cb = codebook({beat(0.08, 1.0), beat(0.16, 1.0), beat(0.08, 2.0)});
  std::vector<int64_t> code(60, 0);
  code[20] = 1;   // a wide beat
  code[40] = 2;   // a tall one
  code[50] = -1;  // a beat without a shape (unknown token)
  const auto f = hlm::relative_morphology(cb.centroids.data(), layout, code);
  EXPECT_GT(at(f, 20)[0], std::log(0.3));
  EXPECT_LT(at(f, 20)[1], 0.95);
  EXPECT_GT(at(f, 20)[3], at(f, 20)[4]);  // the difference lies in the QRS
  EXPECT_NEAR(at(f, 40)[2], std::log(2.0), 0.05);
  EXPECT_NEAR(at(f, 50)[0], std::log(0.01), 1e-6);
  EXPECT_NEAR(at(f, 50)[1], 1.0, 1e-6);
  // The two odd beats do not move their neighbours' template.
  EXPECT_NEAR(at(f, 21)[0], std::log(0.01), 1e-4);
  EXPECT_NEAR(at(f, 41)[1], 1.0, 1e-5);
}

TEST(BeatMorphology, ACodebookThatIsNotOfBeatWindowsIsRefusedNamingIt) {
  for (
      const std::string& metadata :
      {std::string("rhythm {}"), std::string("beat-vq {"), std::string("beat-vq {\"points\":64}"),
       std::string(
           R"(beat-vq {"points":8,"window_before_s":0.25,"window_after_s":0.4,"shape":"relative"})")}) {
    try {
      hlm::codebook_shape_layout(metadata, kPoints, "/runs/x/codebook.bin");
      FAIL() << metadata;
    } catch (const hlm::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("/runs/x/codebook.bin"), std::string::npos);
    }
  }
  EXPECT_THROW(hlm::codebook_shape_layout(kMetadata, 32, "cb.bin"), hlm::ConfigError);
}
