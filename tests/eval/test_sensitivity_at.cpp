// Sensitivity at a given positive predictivity or specificity: hand-computed points of a small
// curve (ties, equal sensitivities, EC57's excused classes, a target no factor reaches), and the
// factor reproduced by taking the most probable class of scaled probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "eval/score_table.h"
#include "eval/sensitivity_at.h"
#include "hlm/errors.h"

namespace {

using hlm::eval::Held;
using hlm::eval::ProbabilityItems;

// Se of `cls` with +P held at `target` (the form most tests use).
hlm::eval::PointOnCurve at_ppv(const ProbabilityItems& items, size_t cls,
                               const std::vector<size_t>& excused, double target, int resamples) {
  return hlm::eval::sensitivity_at(items, cls, excused, Held::kPpv, target, resamples);
}

constexpr size_t kN = 0, kS = 1, kV = 2;

// Seven beats of one record, probabilities of N, S, V. Sorted by P(S) / max(other):
// a 4 (S), b 2 (N), c 0.667 (S), e and g 0.5 (S, V: one factor calls both), d 0.286 (N),
// f 0.111 (N). Calling the first k groups S gives (TP, FP) = (1, 0), (1, 1), (2, 1), (3, 2),
// (3, 3), (3, 4) of 3 S beats.
ProbabilityItems seven_beats() {
  ProbabilityItems items;
  items.probs = {{0.2f, 0.8f, 0.0f},   {0.3f, 0.6f, 0.1f}, {0.6f, 0.4f, 0.0f}, {0.7f, 0.2f, 0.1f},
                 {0.5f, 0.25f, 0.25f}, {0.9f, 0.1f, 0.0f}, {0.1f, 0.3f, 0.6f}};
  items.truth = {kS, kN, kS, kN, kS, kN, kV};
  items.record = std::vector<size_t>(7, 0);
  items.records = 1;
  return items;
}

TEST(SensitivityAt, HandComputedPointsOfASmallCurve) {
  const ProbabilityItems items = seven_beats();
  // +P 0.6 is reached with every S beat called: a, b, c, e and g called S (b and g wrongly),
  // d and f N: 5 of 7 right. Factors above 2 (1 / e's ratio) call e and g, those above 3.5 d
  // too: the factor reported lies between, sqrt(2 x 3.5).
  auto p = at_ppv(items, kS, {}, 0.6, 0);
  EXPECT_TRUE(p.reached);
  EXPECT_DOUBLE_EQ(p.se, 1.0);
  EXPECT_DOUBLE_EQ(p.ppv, 0.6);
  EXPECT_NEAR(p.factor, std::sqrt(7.0), 1e-5);
  EXPECT_DOUBLE_EQ(p.accuracy, 5.0 / 7.0);
  // Above 0.6 the best is the third point: a, b, c called S; e goes to N (its larger other
  // probability), g stays V: a, c, d, f and g right.
  p = at_ppv(items, kS, {}, 0.65, 0);
  EXPECT_DOUBLE_EQ(p.se, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(p.ppv, 2.0 / 3.0);
  EXPECT_NEAR(p.factor, std::sqrt(1.5 * 2.0), 1e-5);
  EXPECT_DOUBLE_EQ(p.accuracy, 5.0 / 7.0);
  // At +P 1 only the first beat.
  p = at_ppv(items, kS, {}, 1.0, 0);
  EXPECT_DOUBLE_EQ(p.se, 1.0 / 3.0);
  EXPECT_NEAR(p.factor, std::sqrt(0.25 * 0.5), 1e-5);
}

// Points of equal Se: the first, with the highest +P, is reported. An item whose probability
// of the class is 0 is called it by no factor.
TEST(SensitivityAt, OfEqualSensitivitiesTheHighestPpvIsReported) {
  ProbabilityItems items;
  items.probs = {{0.2f, 0.8f}, {0.6f, 0.4f}, {1.0f, 0.0f}, {0.9f, 0.1f}};
  items.truth = {1, 0, 1, 0};  // ratios 4 (class 1), 0.667 (0), 0 (1), 0.111 (0)
  items.record = {0, 0, 0, 0};
  items.records = 1;
  const auto p = at_ppv(items, 1, {}, 0.3, 0);
  EXPECT_DOUBLE_EQ(p.se, 0.5);   // the third item is never called 1
  EXPECT_DOUBLE_EQ(p.ppv, 1.0);  // not 0.5 or 0.333, the later points of equal Se
  EXPECT_NEAR(p.factor, std::sqrt(0.25 * 1.5), 1e-5);
  EXPECT_DOUBLE_EQ(p.accuracy, 0.75);
}

// Specificity held instead of +P. Negatives are b, d, f and g: calling the first k groups S
// leaves (TN, FP) = (4, 0), (3, 1), (3, 1), (2, 2), (1, 3), (0, 4).
TEST(SensitivityAt, SpecificityHeldInsteadOfPpv) {
  const ProbabilityItems items = seven_beats();
  auto p = hlm::eval::sensitivity_at(items, kS, {}, Held::kSpecificity, 0.75, 0);
  EXPECT_DOUBLE_EQ(p.se, 2.0 / 3.0);  // the third point: Sp 3 / 4 with two S beats
  EXPECT_DOUBLE_EQ(p.specificity, 0.75);
  EXPECT_DOUBLE_EQ(p.ppv, 2.0 / 3.0);
  EXPECT_NEAR(p.factor, std::sqrt(1.5 * 2.0), 1e-5);
  // With V excused, g called S counts in no cell: the fourth point has TN 2 (d, f), FP 1 (b).
  p = hlm::eval::sensitivity_at(items, kS, {kV}, Held::kSpecificity, 0.6, 0);
  EXPECT_DOUBLE_EQ(p.se, 1.0);
  EXPECT_DOUBLE_EQ(p.specificity, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(hlm::eval::sensitivity_at(items, kS, {}, Held::kSpecificity, 0.6, 0).se,
                   2.0 / 3.0);
  // Specificity 1: only the first point.
  EXPECT_DOUBLE_EQ(hlm::eval::sensitivity_at(items, kS, {}, Held::kSpecificity, 1.0, 0).se,
                   1.0 / 3.0);
}

TEST(SensitivityAt, ExcusedClassesCountInNoCell) {
  const ProbabilityItems items = seven_beats();
  // Without the excuse +P 0.7 is met only by the first point; with V excused (as EC57 excuses
  // Q beats called S), g is no false positive and the fourth point has +P 3 / 4.
  EXPECT_DOUBLE_EQ(at_ppv(items, kS, {}, 0.7, 0).se, 1.0 / 3.0);
  const auto p = at_ppv(items, kS, {kV}, 0.7, 0);
  EXPECT_DOUBLE_EQ(p.se, 1.0);
  EXPECT_DOUBLE_EQ(p.ppv, 0.75);
  // Accuracy still counts every beat: g called S is wrong.
  EXPECT_DOUBLE_EQ(p.accuracy, 5.0 / 7.0);
}

TEST(SensitivityAt, ATargetNoFactorReachesGivesZeroSensitivity) {
  ProbabilityItems items;
  items.probs = {{0.1f, 0.9f}, {0.4f, 0.6f}};  // the surest "class 1" is wrong
  items.truth = {0, 1};
  items.record = {0, 0};
  items.records = 1;
  const auto p = at_ppv(items, 1, {}, 0.6, 0);
  EXPECT_FALSE(p.reached);
  EXPECT_EQ(p.se, 0.0);
  EXPECT_TRUE(std::isnan(p.ppv));
  EXPECT_TRUE(std::isnan(p.factor));
  // A class with no reference item has no sensitivity.
  items.truth = {0, 0};
  EXPECT_TRUE(std::isnan(at_ppv(items, 1, {}, 0.5, 0).se));
}

// With specificity held, items all of the class leave nothing to hold: no Se (left out of the
// interval, as a class without items is). With +P held the same items give +P 1.
TEST(SensitivityAt, SpecificityWithoutItemsOutsideTheClassGivesNoSensitivity) {
  ProbabilityItems items;
  items.probs = {{0.2f, 0.8f}, {0.6f, 0.4f}};
  items.truth = {1, 1};
  items.record = {0, 0};
  items.records = 1;
  EXPECT_TRUE(std::isnan(hlm::eval::sensitivity_at(items, 1, {}, Held::kSpecificity, 0.9, 0).se));
  EXPECT_DOUBLE_EQ(at_ppv(items, 1, {}, 0.9, 0).se, 1.0);
}

TEST(SensitivityAt, RefusesMismatchedInputs) {
  ProbabilityItems items = seven_beats();
  EXPECT_THROW(at_ppv(items, kS, {}, 0.0, 0), hlm::InternalError);
  EXPECT_THROW(at_ppv(items, kS, {}, 1.5, 0), hlm::InternalError);
  EXPECT_THROW(at_ppv(items, 3, {}, 0.5, 0), hlm::InternalError);
  items.record[2] = 1;  // only one record declared
  EXPECT_THROW(at_ppv(items, kS, {}, 0.5, 0), hlm::InternalError);
  items = seven_beats();
  items.truth.pop_back();
  EXPECT_THROW(at_ppv(items, kS, {}, 0.5, 0), hlm::InternalError);
  items = seven_beats();
  items.probs[3][kS] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(at_ppv(items, kS, {}, 0.5, 0), hlm::InternalError);
  items = seven_beats();
  items.probs[3].pop_back();  // fewer classes than the other items
  EXPECT_THROW(at_ppv(items, kS, {}, 0.5, 0), hlm::InternalError);
}

TEST(SensitivityAt, Ec57ExcusesFusionAndQForVAndQForSOfTheAamiClassesOnly) {
  const std::vector<std::string> aami = {"N", "S", "V", "F", "Q"};
  EXPECT_EQ(hlm::eval::ec57_excused(aami, "V"), (std::vector<size_t>{3, 4}));
  EXPECT_EQ(hlm::eval::ec57_excused(aami, "S"), (std::vector<size_t>{4}));
  EXPECT_FALSE(hlm::eval::ec57_excused(aami, "N"));
  EXPECT_EQ(hlm::eval::ec57_excused({"N", "S", "V", "F"}, "V"), (std::vector<size_t>{3}));
  // Without Q, S still counts as EC57 does, with nothing to excuse.
  EXPECT_EQ(hlm::eval::ec57_excused({"N", "S", "V", "F"}, "S"), std::vector<size_t>());
  EXPECT_FALSE(hlm::eval::ec57_excused({"N", "A", "O", "~"}, "A"));
}

// The report's rows and results.json: the seven beats with g's class renamed Q, so EC57 does
// not count g called S against S (the +P 0.7 point of ExcusedClassesCountInNoCell).
TEST(SensitivityAt, PublishedPointsTableCountsAsEc57AndRefusesAnUnknownClass) {
  ProbabilityItems items = seven_beats();
  for (auto& p : items.probs) p.insert(p.begin() + 2, {0.0f, 0.0f});  // V and F: never
  items.truth[6] = 4;                                                 // g is a Q beat
  const std::vector<std::string> aami = {"N", "S", "V", "F", "Q"};
  nlohmann::json results;
  const std::string md = hlm::eval::published_points_table(
      items, aami,
      {{"Paper A", "S", 0.9, Held::kPpv, 0.7, ""}, {"Paper B", "S", 0.9, Held::kPpv, 1.0, ""}},
      results);
  ASSERT_EQ(results["at_published_points"].size(), 2u);
  const auto& a = results["at_published_points"][0];
  EXPECT_EQ(a["count"], "EC57");
  EXPECT_DOUBLE_EQ(a["se"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(a["ppv"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(results["at_published_points"][1]["se"].get<double>(), 1.0 / 3.0);
  // One record: every resample is that record, so the interval is the point itself.
  EXPECT_NE(md.find("| Paper A | S | 0.900 | +P 0.700 | 1.000 (1.000-1.000) | 0.750 | 0.667 | "
                    "2.646 | 0.714 |"),
            std::string::npos)
      << md;
  // Once for the class both points name: always N (3 N beats against 3 S, the first taken)
  // finds no S beat, calls none and is right on 3 of 7.
  EXPECT_NE(md.find("| always N (the majority baseline) | S | | | 0.000 | n/a | 1.000 | | 0.429 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("majority baseline", md.find("majority baseline") + 1), std::string::npos);
  EXPECT_THROW(hlm::eval::published_points_table(
                   items, aami, {{"Paper C", "A", 0.9, Held::kPpv, 0.5, ""}}, results),
               hlm::ConfigError);
  nlohmann::json none;
  EXPECT_EQ(hlm::eval::published_points_table(items, aami, {}, none), "");
  EXPECT_FALSE(none.contains("at_published_points"));
}

// Random beats of 12 records, +P or specificity held, V excused or not: the reported factor,
// applied to the probabilities before the most probable class is taken, gives the reported
// point; no factor of a fine grid does better with that figure held; the interval by record is
// not a single value.
TEST(SensitivityAt, TheFactorReproducesThePointAndNoGridFactorBeatsIt) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  ProbabilityItems items;
  items.records = 12;
  for (size_t i = 0; i < 3000; ++i) {
    const size_t truth = u(rng) < 0.85f ? kN : (u(rng) < 0.5f ? kS : kV);
    std::vector<float> p = {u(rng), u(rng), u(rng)};
    p[truth] += 0.6f * u(rng);  // informative, not perfect
    const float sum = p[0] + p[1] + p[2];
    for (float& x : p) x /= sum;
    items.probs.push_back(p);
    items.truth.push_back(truth);
    items.record.push_back(i % items.records);
  }
  // Se, +P and specificity of class S when its probability is multiplied by m, V beats called
  // S counting in no cell when `excuse_v`.
  struct Point {
    double se, ppv, specificity;
  };
  auto at = [&](double m, bool excuse_v) {
    double tp = 0, fp = 0, tn = 0, pos = 0;
    for (size_t i = 0; i < items.probs.size(); ++i) {
      const auto& p = items.probs[i];
      const bool called = m * p[kS] > std::max(p[kN], p[kV]);
      const size_t t = items.truth[i];
      pos += t == kS;
      tp += called && t == kS;
      fp += called && t != kS && !(excuse_v && t == kV);
      tn += !called && t != kS;
    }
    return Point{tp / pos, tp + fp > 0 ? tp / (tp + fp) : 0.0, tn / (tn + fp)};
  };
  for (const Held held : {Held::kPpv, Held::kSpecificity})
    for (const bool excuse_v : {false, true})
      for (const double target : {0.3, 0.5, 0.7, 0.95}) {
        const auto p = hlm::eval::sensitivity_at(
            items, kS, excuse_v ? std::vector<size_t>{kV} : std::vector<size_t>{}, held, target,
            200);
        const std::string what = std::string(hlm::eval::held_name(held)) + " " +
                                 std::to_string(target) + (excuse_v ? " V excused" : "");
        ASSERT_TRUE(p.reached) << what;
        const Point there = at(p.factor, excuse_v);
        EXPECT_NEAR(there.se, p.se, 1e-12) << what;
        EXPECT_NEAR(there.ppv, p.ppv, 1e-12) << what;
        EXPECT_NEAR(there.specificity, p.specificity, 1e-12) << what;
        EXPECT_GE(held == Held::kPpv ? p.ppv : p.specificity, target) << what;
        for (double m = 0.05; m < 20.0; m *= 1.02) {
          const Point grid = at(m, excuse_v);
          if ((held == Held::kPpv ? grid.ppv : grid.specificity) >= target) {
            EXPECT_LE(grid.se, p.se + 1e-12) << what << ", factor " << m;
          }
        }
        EXPECT_LT(p.se_ci95.low, p.se_ci95.high) << what;
      }
}

// Beats scored as the by-beat rows score them: each of a segment's 10 beats takes the segment's
// probabilities, and the probabilities come in steps of a tenth, so equal ratios also span
// records. The point and the interval by record are those of a plain count over every ratio at
// or above each threshold, beat by beat, on the same resamples.
TEST(SensitivityAt, BeatsSharingTheirSegmentsProbabilitiesGiveThePlainCountsInterval) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> step(1, 9);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  ProbabilityItems items;
  items.records = 9;
  for (size_t r = 0; r < items.records; ++r)
    for (int segment = 0; segment < 30; ++segment) {
      // The segment's class, which most of its beats share and its probabilities favour.
      const size_t kind = u(rng) < 0.7f ? kN : (u(rng) < 0.6f ? kS : kV);
      std::vector<float> p = {float(step(rng)), float(step(rng)), float(step(rng))};
      p[kind] += 3.0f;
      for (float& x : p) x /= 10.0f;
      for (int beat = 0; beat < 10; ++beat) {
        const size_t truth = u(rng) < 0.8f ? kind : kN;
        items.probs.push_back(p);
        items.truth.push_back(truth);
        items.record.push_back(r);
      }
    }
  auto ratio = [](const std::vector<float>& p) {
    return double(p[kS]) / double(std::max(p[kN], p[kV]));
  };
  std::set<double> thresholds;
  for (const auto& p : items.probs) thresholds.insert(ratio(p));
  // The highest Se with +P at least `target`, V excused, counting beat by beat.
  auto plain = [&](const std::vector<double>& weight, double target) {
    double positives = 0, best = 0;
    for (size_t i = 0; i < items.probs.size(); ++i)
      positives += weight[items.record[i]] * double(items.truth[i] == kS);
    if (positives == 0) return std::numeric_limits<double>::quiet_NaN();
    for (const double threshold : thresholds) {
      double tp = 0, fp = 0;
      for (size_t i = 0; i < items.probs.size(); ++i) {
        if (ratio(items.probs[i]) < threshold) continue;
        const double w = weight[items.record[i]];
        tp += w * double(items.truth[i] == kS);
        fp += w * double(items.truth[i] == kN);
      }
      if (tp > 0 && tp / (tp + fp) >= target) best = std::max(best, tp / positives);
    }
    return best;
  };
  for (const double target : {0.5, 0.7, 0.9}) {
    const auto p = hlm::eval::sensitivity_at(items, kS, {kV}, Held::kPpv, target, 100);
    EXPECT_DOUBLE_EQ(p.se, plain(std::vector<double>(items.records, 1.0), target)) << target;
    std::vector<double> weight(items.records);
    const auto interval = hlm::eval::bootstrap_records(
        items.records,
        [&](const std::vector<size_t>& drawn) {
          std::fill(weight.begin(), weight.end(), 0.0);
          for (size_t k : drawn) weight[k] += 1.0;
          return plain(weight, target);
        },
        100);
    EXPECT_DOUBLE_EQ(p.se_ci95.low, interval.low) << target;
    EXPECT_DOUBLE_EQ(p.se_ci95.high, interval.high) << target;
    EXPECT_LT(p.se_ci95.low, p.se_ci95.high) << target;
  }
}

}  // namespace
