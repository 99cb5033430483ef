// Sensitivity of one class at a given positive predictivity or specificity (see
// sensitivity_at.h).
#include "eval/sensitivity_at.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "hlm/errors.h"

namespace hlm::eval {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What the sweep needs of one item.
struct Ranked {
  double ratio;  // the class's probability over the largest other one
  size_t truth;  // reference class
  size_t rest;   // the most probable other class: the call when the item is not `cls`
  size_t record;
};

// The items sorted by ratio, highest first: the order in which a growing factor calls them cls.
std::vector<Ranked> rank(const ProbabilityItems& items, size_t cls) {
  std::vector<Ranked> out;
  out.reserve(items.probs.size());
  for (size_t i = 0; i < items.probs.size(); ++i) {
    const std::vector<float>& p = items.probs[i];
    if (p.size() < 2 || p.size() != items.probs.front().size() || cls >= p.size() ||
        items.truth[i] >= p.size() || items.record[i] >= items.records)
      throw InternalError(
          "sensitivity_at: item {} has {} class probabilities (class {}, reference {}, "
          "record {} of {})",
          i, p.size(), cls, items.truth[i], items.record[i], items.records);
    for (const float x : p)
      if (!std::isfinite(x) || x < 0.0f)
        throw InternalError("sensitivity_at: item {} has the probability {}", i, x);
    size_t rest = cls == 0 ? 1 : 0;
    for (size_t c = 0; c < p.size(); ++c)
      if (c != cls && p[c] > p[rest]) rest = c;
    // A zero other probability makes the ratio infinite: called cls at any factor.
    const double ratio = p[rest] > 0.0f  ? double(p[cls]) / double(p[rest])
                         : p[cls] > 0.0f ? std::numeric_limits<double>::infinity()
                                         : 0.0;
    out.push_back({ratio, items.truth[i], rest, items.record[i]});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Ranked& a, const Ranked& b) { return a.ratio > b.ratio; });
  return out;
}

// A factor strictly between the one that calls the items of ratio `ratio` and the one that
// would also call those of `next` (the next lower ratio; 0 when there is none, or when no
// finite factor calls them).
double factor_between(double ratio, double next) {
  const double lo = 1.0 / ratio;  // 0 for an infinite ratio
  if (next <= 0.0) return lo > 0.0 ? 2.0 * lo : 1.0;
  const double hi = 1.0 / next;
  return lo > 0.0 ? std::sqrt(lo * hi) : 0.5 * hi;
}

// One sweep down the ranked items, each weighted by how often its record was drawn: the point
// with the highest Se whose held figure reaches the target, the first (where that figure is
// highest) of equal ones. Items of equal ratio join together (one factor calls them all);
// those of ratio 0 (the class's probability 0) no finite factor calls.
PointOnCurve sweep(const std::vector<Ranked>& ranked, size_t cls, const std::vector<bool>& excused,
                   Held held, double target, const std::vector<double>& weight) {
  // correct: as if no item were called cls; negatives: the items outside the class.
  double positives = 0, negatives = 0, total = 0, correct = 0;
  for (const Ranked& r : ranked) {
    const double w = weight[r.record];
    total += w;
    (r.truth == cls ? positives : negatives) += w;
    if (r.truth == r.rest) correct += w;
  }
  PointOnCurve best;
  best.ppv = best.specificity = best.factor = best.accuracy = kNaN;
  // Without items of the class there is no Se; without items outside it, no specificity to
  // hold (with +P held, such items give +P 1 at every point).
  if (positives <= 0 || (held == Held::kSpecificity && negatives <= 0)) {
    best.se = kNaN;
    return best;
  }
  // Called cls so far: true positives, false ones, and excused ones (in no cell).
  double tp = 0, fp = 0, excused_called = 0;
  for (size_t i = 0; i < ranked.size() && ranked[i].ratio > 0.0;) {
    const double ratio = ranked[i].ratio;
    for (; i < ranked.size() && ranked[i].ratio == ratio; ++i) {
      const Ranked& r = ranked[i];
      const double w = weight[r.record];
      if (r.truth == cls)
        tp += w;
      else if (excused[r.truth])
        excused_called += w;
      else
        fp += w;
      correct += w * (double(r.truth == cls) - double(r.truth == r.rest));
    }
    const double ppv = tp + fp > 0 ? tp / (tp + fp) : kNaN;
    const double true_negatives = negatives - fp - excused_called;
    const double specificity =
        true_negatives + fp > 0 ? true_negatives / (true_negatives + fp) : kNaN;
    // Se only grows down the list: a later point replaces the best only by finding more (and a
    // point that finds none is no point of the curve).
    const double se = tp / positives;
    if (tp > 0 && (held == Held::kPpv ? ppv : specificity) >= target && se > best.se) {
      best.reached = true;
      best.se = se;
      best.ppv = ppv;
      best.specificity = specificity;
      best.factor = factor_between(ratio, i < ranked.size() ? ranked[i].ratio : 0.0);
      best.accuracy = correct / total;
    }
  }
  return best;
}
}  // namespace

const char* held_name(Held held) { return held == Held::kPpv ? "ppv" : "specificity"; }

PointOnCurve sensitivity_at(const ProbabilityItems& items, size_t cls,
                            const std::vector<size_t>& excused, Held held, double target,
                            int resamples) {
  if (items.truth.size() != items.probs.size() || items.record.size() != items.probs.size())
    throw InternalError("sensitivity_at: {} items' probabilities, {} reference classes, {} records",
                        items.probs.size(), items.truth.size(), items.record.size());
  if (!(target > 0.0 && target <= 1.0))
    throw InternalError("sensitivity_at: the target {} {} is not in (0, 1]", held_name(held),
                        target);
  const std::vector<Ranked> ranked = rank(items, cls);
  size_t classes = cls + 1;
  for (size_t t : items.truth) classes = std::max(classes, t + 1);
  for (size_t c : excused) classes = std::max(classes, c + 1);
  std::vector<bool> is_excused(classes, false);
  for (size_t c : excused)
    if (c != cls) is_excused[c] = true;
  PointOnCurve point =
      sweep(ranked, cls, is_excused, held, target, std::vector<double>(items.records, 1.0));
  std::vector<double> weight(items.records);
  point.se_ci95 = bootstrap_records(
      items.records,
      [&](const std::vector<size_t>& drawn) {
        std::fill(weight.begin(), weight.end(), 0.0);
        for (size_t k : drawn) weight[k] += 1.0;
        return sweep(ranked, cls, is_excused, held, target, weight).se;
      },
      resamples);
  return point;
}

}  // namespace hlm::eval
