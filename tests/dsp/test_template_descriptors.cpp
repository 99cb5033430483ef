// Template descriptors: a wide QRS reads wider, a P wave and an inverted T wave are seen, the
// values do not change with the sampling rate, the gain (but for the amplitude itself) or the
// lead's polarity, and an ectopic, fibrillating or noisy beat differs from its template. Shape
// descriptors (the beat's waveform over its template's QRS) likewise.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "hlm/dsp/beat_morphology.h"
#include "hlm/dsp/beat_shape_descriptors.h"
#include "hlm/dsp/beat_window.h"
#include "hlm/dsp/template_descriptors.h"
#include "hlm/errors.h"

namespace {

using Shape = std::function<double(double)>;  // value at t seconds from the R peak

double gauss(double t, double centre, double width) {
  return std::exp(-0.5 * std::pow((t - centre) / width, 2));
}

// A beat: a QRS of Gaussian width qrs_s, an optional P wave 170 ms before it and a T wave
// 250 ms after it (t_height < 0: inverted).
Shape beat(double qrs_s, bool p_wave, double t_height) {
  return [=](double t) {
    return gauss(t, 0.0, qrs_s) + (p_wave ? 0.15 * gauss(t, -0.17, 0.025) : 0.0) +
           t_height * gauss(t, 0.25, 0.05);
  };
}

const hlm::dsp::BeatWindowOptions kWindow;  // 64 points, 0.25 s before to 0.40 s after

// The windows of a record of `beats` beats one second apart sampled at fs, shape_of(i) giving
// beat i, gain scaling the signal; each beat's row and its template.
struct CutRecord {
  std::vector<float> windows, templates;
  std::vector<int64_t> row;
};

CutRecord cut_record(const std::function<Shape(int)>& shape_of, int beats, double fs, double gain) {
  const size_t n = size_t((beats + 1) * fs);
  std::vector<float> x(n, 0.0f);
  std::vector<int64_t> peaks;
  for (int b = 0; b < beats; ++b) {
    const double r = 0.5 + b;
    peaks.push_back(int64_t(std::lround(r * fs)));
    const Shape s = shape_of(b);
    for (size_t i = 0; i < n; ++i)
      if (std::abs(double(i) / fs - r) < 0.5) x[i] += float(gain * s(double(i) / fs - r));
  }
  CutRecord cut;
  const auto kept = hlm::dsp::cut_beat_windows(x.data(), n, fs, peaks, kWindow, &cut.windows);
  cut.row.resize(kept.size());
  for (size_t i = 0; i < cut.row.size(); ++i) cut.row[i] = int64_t(i);
  cut.templates = hlm::local_templates(cut.windows.data(), kWindow.points, cut.row);
  return cut;
}

// The descriptors of every beat of such a record.
std::vector<float> describe(const std::function<Shape(int)>& shape_of, int beats, double fs,
                            double gain = 1.0) {
  const CutRecord c = cut_record(shape_of, beats, fs, gain);
  return hlm::template_descriptors(c.windows.data(), kWindow, c.row, c.templates);
}

std::vector<float> of_beat(const std::vector<float>& all, size_t i) {
  return {all.begin() + ptrdiff_t(i * hlm::kTemplateDescriptorCount),
          all.begin() + ptrdiff_t((i + 1) * hlm::kTemplateDescriptorCount)};
}

std::vector<float> record_of(const Shape& s, double fs = 360.0, double gain = 1.0) {
  return of_beat(describe([&](int) { return s; }, 12, fs, gain), 6);
}

}  // namespace

TEST(TemplateDescriptors, ReadTheQrsWidthThePWaveAndAnInvertedTWave) {
  const auto narrow = record_of(beat(0.012, true, 0.3));
  const auto wide = record_of(beat(0.03, true, 0.3));
  // The QRS spans about 5.2 Gaussian widths above 15 % of its steepest slope.
  EXPECT_NEAR(narrow[0], 5.2 * 0.012, 0.015);
  EXPECT_NEAR(wide[0], 5.2 * 0.03, 0.02);
  EXPECT_NEAR(narrow[1], std::log(1.0 + 0.01), 0.1);  // the QRS is 1 unit high
  EXPECT_GT(narrow[2], 0.95);                         // and all positive
  // A P wave of 15 % of the QRS, and none.
  const auto no_p = record_of(beat(0.012, false, 0.3));
  EXPECT_NEAR(narrow[3], 0.15, 0.04);
  EXPECT_NEAR(narrow[4], 0.15, 0.04);
  EXPECT_LT(no_p[3], 0.02);
  EXPECT_LT(no_p[4], 0.02);
  // T wave of 30 %, upright and inverted.
  const auto inverted = record_of(beat(0.012, true, -0.3));
  EXPECT_NEAR(narrow[5], 0.3, 0.05);
  EXPECT_NEAR(narrow[6], 0.0, 0.05);
  EXPECT_NEAR(inverted[5], 0.0, 0.05);
  EXPECT_NEAR(inverted[6], -0.3, 0.05);
  // Every beat equals its template.
  EXPECT_NEAR(narrow[7], 1.0, 1e-4);
  EXPECT_NEAR(narrow[8], 0.0, 1e-4);
}

TEST(TemplateDescriptors, AreTheSameAtAnySamplingRateGainOrPolarity) {
  const Shape s = beat(0.02, true, -0.25);
  const auto at_360 = record_of(s);
  const auto at_128 = record_of(s, 128.0), at_1000 = record_of(s, 1000.0);
  const auto louder = record_of(s, 360.0, 3.0);
  const auto negated = record_of(s, 360.0, -1.0);
  for (int j = 0; j < hlm::kTemplateDescriptorCount; ++j) {
    SCOPED_TRACE(hlm::kTemplateDescriptorNames[j]);
    const double tolerance = j == 0 ? 0.021 : 0.06;  // two points of the window for the width
    EXPECT_NEAR(at_128[size_t(j)], at_360[size_t(j)], tolerance);
    EXPECT_NEAR(at_1000[size_t(j)], at_360[size_t(j)], tolerance);
    EXPECT_NEAR(negated[size_t(j)], at_360[size_t(j)], 1e-4);
    if (j == 1)
      EXPECT_NEAR(louder[1], std::log(3 * std::exp(at_360[1]) - 0.02), 1e-3);
    else
      EXPECT_NEAR(louder[size_t(j)], at_360[size_t(j)], 1e-4);
  }
}

TEST(TemplateDescriptors, SetAnEctopicFibrillatingOrNoisyBeatApartFromItsTemplate) {
  const Shape normal = beat(0.012, true, 0.3);
  const Shape ectopic = [](double t) {
    return 1.2 * gauss(t, 0.02, 0.035) - 0.4 * gauss(t, 0.2, 0.06);
  };
  // Fibrillatory waves where the P wave should be.
  const Shape fibrillating = [&](double t) {
    return normal(t) - 0.15 * gauss(t, -0.17, 0.025) + 0.1 * std::sin(2 * M_PI * 7 * t);
  };
  const Shape noisy = [&](double t) { return normal(t) + 0.05 * std::sin(2 * M_PI * 35 * t); };
  const auto all = describe(
      [&](int b) {
        return b == 10 ? ectopic : b == 14 ? fibrillating : b == 18 ? noisy : normal;
      },
      24, 360.0);
  const auto usual = of_beat(all, 12), odd = of_beat(all, 10), af = of_beat(all, 14);
  // One ectopic beat does not move the template: its descriptors are the record's.
  for (int j = 0; j < 7; ++j) EXPECT_NEAR(odd[size_t(j)], usual[size_t(j)], 1e-4) << j;
  EXPECT_GT(usual[7], 0.99);
  EXPECT_LT(odd[7], usual[7] - 0.2);
  EXPECT_GT(af[8], 0.05);
  EXPECT_LT(usual[8], 0.01);
  EXPECT_GT(of_beat(all, 18)[9], 2 * usual[9]);
}

TEST(TemplateDescriptors, ABeatWithoutAWindowTakesItsTemplate) {
  std::vector<float> windows;
  const Shape s = beat(0.012, true, 0.3);
  for (int b = 0; b < 3; ++b)
    for (int j = 0; j < kWindow.points; ++j)
      windows.push_back(float(s(j * 0.65 / (kWindow.points - 1) - 0.25)));
  const std::vector<int64_t> row = {0, -1, 1, 2};
  const auto templates = hlm::local_templates(windows.data(), kWindow.points, row);
  const auto all = hlm::template_descriptors(windows.data(), kWindow, row, templates);
  const auto missing = of_beat(all, 1), present = of_beat(all, 0);
  for (int j = 0; j < hlm::kTemplateDescriptorCount; ++j)
    EXPECT_NEAR(missing[size_t(j)], present[size_t(j)], 1e-5) << j;
}

TEST(TemplateDescriptors, NeedAWindowReachingThePAndTWaves) {
  EXPECT_TRUE(hlm::covers_template_descriptors(kWindow));
  hlm::dsp::BeatWindowOptions short_window;
  short_window.after_seconds = 0.3;
  EXPECT_FALSE(hlm::covers_template_descriptors(short_window));
  short_window = kWindow;
  short_window.before_seconds = 0.2;
  EXPECT_FALSE(hlm::covers_template_descriptors(short_window));
  const std::vector<float> windows(size_t(kWindow.points), 0.0f), templates = windows;
  EXPECT_THROW(hlm::template_descriptors(windows.data(), short_window, {0}, templates),
               hlm::InternalError);
  // A flat record gives finite values.
  for (float v : hlm::template_descriptors(windows.data(), kWindow, {0}, templates))
    EXPECT_TRUE(std::isfinite(v));
}

// Shape descriptors (hlm/dsp/beat_shape_descriptors.h): the beat and the beat minus its
// template at fixed times, over the template's QRS.
constexpr int kShapePoints = 16;

std::vector<float> shape_of_beats(const std::function<Shape(int)>& shape_of, double fs,
                                  double gain = 1.0) {
  const CutRecord c = cut_record(shape_of, 9, fs, gain);
  return hlm::beat_shape_descriptors(c.windows.data(), kWindow, c.row, c.templates, kShapePoints);
}

TEST(BeatShapeDescriptors, AnEctopicBeatDiffersFromItsTemplateWhereItsShapeDoes) {
  // Beat 4 of 9 is wide and has no P wave; the others are alike.
  const auto values = shape_of_beats(
      [](int i) { return i == 4 ? beat(0.04, false, -0.3) : beat(0.012, true, 0.3); }, 360.0);
  const size_t width = size_t(hlm::beat_shape_descriptor_count(kShapePoints));
  ASSERT_EQ(values.size(), 9 * width);
  auto largest_difference = [&](size_t beat_index) {
    double most = 0;
    for (int k = 0; k < kShapePoints; ++k)
      most = std::max(most, std::abs(double(values[beat_index * width + kShapePoints + k])));
    return most;
  };
  EXPECT_LT(largest_difference(0), 0.01);
  EXPECT_GT(largest_difference(4), 0.2);
  // The ectopic beat's own values: its T wave inverted where the template's is upright.
  const int t_point =
      int(std::lround((0.25 + kWindow.before_seconds) /
                      (kWindow.before_seconds + kWindow.after_seconds) * (kShapePoints - 1)));
  EXPECT_LT(values[4 * width + size_t(t_point)], 0.0f);
  EXPECT_GT(values[0 * width + size_t(t_point)], 0.0f);
}

TEST(BeatShapeDescriptors, TheSameUnderAnyGainPolarityOrSamplingRate) {
  const auto shape = [](int i) {
    return i == 4 ? beat(0.04, false, -0.3) : beat(0.012, true, 0.3);
  };
  const auto reference = shape_of_beats(shape, 360.0);
  const auto louder = shape_of_beats(shape, 360.0, 3.0);
  const auto inverted = shape_of_beats(shape, 360.0, -0.5);
  const auto slower = shape_of_beats(shape, 250.0);
  ASSERT_EQ(reference.size(), louder.size());
  ASSERT_EQ(reference.size(), slower.size());
  for (size_t j = 0; j < reference.size(); ++j) {
    EXPECT_NEAR(louder[j], reference[j], 1e-4) << j;
    EXPECT_NEAR(inverted[j], reference[j], 1e-4) << j;
    EXPECT_NEAR(slower[j], reference[j], 0.05) << j;
  }
}

TEST(BeatShapeDescriptors, NamesSayTheTimeAndThePart) {
  const auto names = hlm::beat_shape_descriptor_names(kWindow, 4);
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names[0], "beat at -0.250 s / template QRS");
  EXPECT_EQ(names[3], "beat at +0.400 s / template QRS");
  EXPECT_EQ(names[4], "beat minus template at -0.250 s / template QRS");
  EXPECT_THROW(hlm::beat_shape_descriptors(nullptr, kWindow, {}, {}, 1), hlm::InternalError);
}
