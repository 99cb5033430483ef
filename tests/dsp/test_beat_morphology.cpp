// Beat shapes against their record's template: a record's usual beat reads as typical at any
// amplitude, an ectopic beat among them as different (mostly within the QRS for a wide one,
// by its amplitude for a scaled one), and codebooks that are not beat windows are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

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

namespace {
// A record's RR intervals (seconds): sinus at 0.8 s, then a stretch of bigeminy (each ectopic
// beat 0.45 s after a sinus one, a pause of 1.15 s after it) of `pairs` pairs, then sinus
// again. The first beat has no interval (0).
std::vector<double> sinus_bigeminy_sinus(int before, int pairs, int after) {
  std::vector<double> rr(1, 0.0);
  rr.insert(rr.end(), size_t(before), 0.8);
  for (int k = 0; k < pairs; ++k) rr.push_back(0.45), rr.push_back(1.15);
  rr.insert(rr.end(), size_t(after), 0.8);
  return rr;
}
}  // namespace

TEST(BeatMorphology, PrematureBeatsAreTheEarlyOnesNotThoseAfterAPause) {
  const auto rr = sinus_bigeminy_sinus(100, 60, 100);
  const auto premature = hlm::premature_beats(rr);
  ASSERT_EQ(premature.size(), rr.size());
  EXPECT_FALSE(premature[0]);  // no interval
  // Every ectopic beat is marked, and no sinus beat after its pause, though half the
  // neighbours are early (a local median would sit on either interval). Sinus beats just
  // before and after the bigeminy may be marked, as the pauses raise the reference there:
  // they are then left out of the templates, which the other sinus beats make.
  for (size_t i = 1; i < rr.size(); ++i) {
    if (rr[i] == 0.45) {
      EXPECT_TRUE(premature[i]) << "ectopic beat " << i;
    }
    if (rr[i] == 1.15) {
      EXPECT_FALSE(premature[i]) << "sinus beat after a pause " << i;
    }
    if (i < 60 || i > rr.size() - 60) {
      EXPECT_FALSE(premature[i]) << "sinus beat " << i;
    }
  }

  // A run of tachycardia longer than the neighbourhood: early against the record's median.
  std::vector<double> vt(1, 0.0);
  vt.insert(vt.end(), 300, 0.8);
  vt.insert(vt.end(), 120, 0.4);
  vt.insert(vt.end(), 300, 0.8);
  const auto run = hlm::premature_beats(vt);
  for (size_t i = 301; i < 421; ++i) EXPECT_TRUE(run[i]) << i;
  EXPECT_FALSE(run[200]);
  EXPECT_FALSE(run[600]);
  // Sinus arrhythmia within 15 % of the rhythm is not premature.
  std::vector<double> varied(1, 0.0);
  for (int k = 0; k < 200; ++k) varied.push_back(k % 2 ? 0.76 : 0.84);
  for (bool p : hlm::premature_beats(varied)) EXPECT_FALSE(p);
}

TEST(BeatMorphology, TimelyTemplatesKeepTheSinusShapeThroughBigeminy) {
  const auto layout = hlm::codebook_shape_layout(kMetadata, kPoints, "cb.bin");
  // Row 0 the patient's normal beat, row 1 a wide ventricular one. Bigeminy throughout, with
  // one extra ectopic beat in every tenth pair, so ectopic beats are the majority of every
  // neighbourhood.
  const auto cb = codebook({beat(0.08, 1.0), beat(0.16, 1.0)});
  std::vector<int64_t> code;
  std::vector<double> rr;
  for (int k = 0; k < 100; ++k) {
    code.push_back(0), rr.push_back(code.size() == 1 ? 0.0 : 1.15);
    code.push_back(1), rr.push_back(0.45);
    if (k % 10 == 0) code.push_back(1), rr.push_back(0.45);
  }
  const auto premature = hlm::premature_beats(rr);
  const auto all = hlm::local_templates(cb.centroids.data(), kPoints, code);
  const auto timely = hlm::local_templates(cb.centroids.data(), kPoints, code, premature);
  size_t ectopic = code.size() / 2;  // an ectopic beat after a sinus one, deep inside
  while (code[ectopic] != 1 || code[ectopic - 1] != 0) ++ectopic;
  // With every beat, the template is the ectopic shape, and the ectopic beat looks typical.
  const auto f_all = hlm::relative_morphology(cb.centroids.data(), layout, code, all);
  EXPECT_NEAR(at(f_all, ectopic)[1], 1.0, 1e-5);
  // Without the premature beats, the template is the sinus shape again.
  const auto f_timely = hlm::relative_morphology(cb.centroids.data(), layout, code, timely);
  EXPECT_LT(at(f_timely, ectopic)[1], 0.95);
  EXPECT_NEAR(at(f_timely, ectopic - 1)[1], 1.0, 1e-5);  // the sinus beat before it
  for (int j = 0; j < kPoints; ++j)
    ASSERT_FLOAT_EQ(timely[ectopic * kPoints + size_t(j)], cb.centroids[size_t(j)]) << j;
}

TEST(BeatMorphology, TimelyTemplatesFallBackToAllBeatsWhereTooFewAreTimely) {
  // Twelve beats, nine of them premature: fewer than kMinTemplateShapes remain, so every
  // beat with a shape makes the template, as without the marks.
  const auto cb = codebook({beat(0.08, 1.0), beat(0.16, 1.0)});
  const std::vector<int64_t> code = {1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1};
  std::vector<bool> premature(code.size());
  for (size_t i = 0; i < code.size(); ++i) premature[i] = code[i] == 1;
  EXPECT_EQ(hlm::local_templates(cb.centroids.data(), kPoints, code, premature),
            hlm::local_templates(cb.centroids.data(), kPoints, code));
  // The marks must cover every beat.
  EXPECT_THROW(hlm::local_templates(cb.centroids.data(), kPoints, code, std::vector<bool>(3)),
               hlm::InternalError);
}

namespace {

// The template of beat i as its definition says: for each point, the median (the value at
// index size / 2 in sorted order) of the beats within kTemplateBeats either side that have a
// shape and, where at least kMinTemplateShapes such beats are not marked, are not marked.
std::vector<float> templates_by_definition(const std::vector<float>& shapes, size_t dim,
                                           const std::vector<int64_t>& row,
                                           const std::vector<bool>& marks) {
  const size_t n = row.size(), w = size_t(hlm::kTemplateBeats);
  std::vector<float> out(n * dim, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = i >= w ? i - w : 0, hi = std::min(n, i + w + 1);
    size_t unmarked = 0;
    for (size_t k = lo; k < hi; ++k) unmarked += row[k] >= 0 && !marks[k];
    const bool leave_marked_out = unmarked >= size_t(hlm::kMinTemplateShapes);
    for (size_t j = 0; j < dim; ++j) {
      std::vector<float> v;
      for (size_t k = lo; k < hi; ++k)
        if (row[k] >= 0 && !(leave_marked_out && marks[k]))
          v.push_back(shapes[size_t(row[k]) * dim + j]);
      std::sort(v.begin(), v.end());
      if (!v.empty()) out[i * dim + j] = v[v.size() / 2];
    }
  }
  return out;
}

}  // namespace

// The sliding window gives each beat exactly the template its definition gives, through
// beats without a shape, repeated values, and stretches where the marked beats are too many to
// leave out and where they are not.
TEST(BeatMorphology, TemplatesSlideOverTheRecordExactlyAsDefined) {
  std::mt19937 rng(7);
  constexpr size_t kDim = 5;
  for (const size_t n : {0, 1, 11, 60, 101, 102, 400}) {
    std::vector<float> shapes(n * kDim);
    for (float& v : shapes) v = float(rng() % 17) / 4.0f;  // ties on purpose
    std::vector<int64_t> row(n);
    std::vector<bool> marks(n);
    for (size_t i = 0; i < n; ++i) {
      row[i] = rng() % 9 == 0 ? -1 : int64_t(i);
      // Marked beats are rare in the first half and most beats in the second.
      marks[i] = rng() % 100 < (i < n / 2 ? 10u : 95u);
    }
    EXPECT_EQ(hlm::local_templates(shapes.data(), kDim, row, marks),
              templates_by_definition(shapes, kDim, row, marks))
        << n << " beats";
    EXPECT_EQ(hlm::local_templates(shapes.data(), kDim, row),
              templates_by_definition(shapes, kDim, row, std::vector<bool>(n)))
        << n << " beats, none marked";
  }
}

// Each point's template is the median (the upper middle value) of that point over the beats
// with a shape within kTemplateBeats either side, as a selection over the whole window finds
// it: with ties, signed zeros and beats without a shape, where the sliding window places each
// value by counting the values below it.
TEST(BeatMorphology, SlidingTemplatesAreTheWindowsMedians) {
  constexpr int kDim = 7;
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> level(-3, 3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (size_t n : {1, 40, 333}) {
    std::vector<float> shapes(n * kDim);
    for (float& v : shapes)
      v = u(rng) < 0.1f ? -0.0f : float(level(rng)) * 0.5f + (u(rng) < 0.5f ? 0.0f : u(rng));
    std::vector<int64_t> row(n);
    for (size_t k = 0; k < n; ++k) row[k] = u(rng) < 0.1f ? -1 : int64_t(k);
    const std::vector<float> templates = hlm::local_templates(shapes.data(), kDim, row);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < kDim; ++j) {
        std::vector<float> window;
        for (size_t k = i >= hlm::kTemplateBeats ? i - hlm::kTemplateBeats : 0;
             k < std::min(n, i + hlm::kTemplateBeats + 1); ++k)
          if (row[k] >= 0) window.push_back(shapes[size_t(row[k]) * kDim + j]);
        float median = 0.0f;
        if (!window.empty()) {
          std::nth_element(window.begin(), window.begin() + ptrdiff_t(window.size() / 2),
                           window.end());
          median = window[window.size() / 2];
        }
        ASSERT_EQ(templates[i * kDim + j], median) << "beat " << i << " point " << j;
      }
  }
}

// A beat is premature when its interval is under kPrematureRatio of the larger of the record's
// median interval and the 75th percentile of the known intervals within kTemplateBeats either
// side, selected afresh for each beat here; intervals of 0 or less are unknown and never
// premature.
TEST(BeatMorphology, PrematureBeatsFollowTheirNeighboursPercentile) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t n : {1, 60, 500}) {
    std::vector<double> rr(n);
    for (double& v : rr) v = u(rng) < 0.05 ? 0.0 : double(int(u(rng) * 6)) * 0.1 + 0.4;
    rr[0] = 0.7;  // at least one known interval
    std::vector<double> known;
    for (double v : rr)
      if (v > 0) known.push_back(v);
    std::sort(known.begin(), known.end());
    const double median = known[std::min(known.size() - 1, known.size() / 2)];
    const std::vector<bool> premature = hlm::premature_beats(rr);
    for (size_t i = 0; i < n; ++i) {
      if (!(rr[i] > 0)) {
        EXPECT_FALSE(premature[i]) << "beat " << i << " of " << n;
        continue;
      }
      std::vector<double> near;  // holds rr[i] itself
      for (size_t k = i >= hlm::kTemplateBeats ? i - hlm::kTemplateBeats : 0;
           k < std::min(n, i + hlm::kTemplateBeats + 1); ++k)
        if (rr[k] > 0) near.push_back(rr[k]);
      std::sort(near.begin(), near.end());
      const double q75 = near[std::min(near.size() - 1, size_t(0.75 * double(near.size())))];
      EXPECT_EQ(premature[i], rr[i] < hlm::kPrematureRatio * std::max(median, q75))
          << "beat " << i << " of " << n;
    }
  }
}
