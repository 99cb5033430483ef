// Sensitivity of one class at a given positive predictivity or specificity (see
// sensitivity_at.h).
#include "eval/sensitivity_at.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// One record's items as if none were called cls: of the class, outside it, all, and those right
// (their reference class the most probable other one).
struct RecordTotals {
  double positives = 0, negatives = 0, items = 0, right = 0;
};

// One record's items in a group of equal ratio: what calling them cls adds (true, false and
// excused positives) and how it changes the count of those right.
struct RecordCalls {
  size_t record = 0;
  double tp = 0, fp = 0, excused = 0, right_change = 0;
};

// The ranked items as the sweep reads them. A factor calls a whole group of equal ratio at
// once, and the bootstrap weighs items only by their record, so each group is kept as one
// tally per record: beats that share their segments' probabilities (the by-beat scores) make
// a group of many items in few records, and each resample reads one tally where it read every
// item. The counts are whole numbers, as are the resamples' weights, so the sums are exact and
// the same as item by item.
struct Curve {
  std::vector<RecordTotals> totals;  // indexed by record
  std::vector<RecordCalls> calls;    // per group, one per record it holds
  std::vector<double> ratio;         // per group, highest first; only groups of ratio above 0
  std::vector<size_t> end;           // per group: one past its last tally in `calls`
};

// The curve of the ranked items for class cls, items of the `excused` reference classes called
// cls counting in no cell.
Curve make_curve(const std::vector<Ranked>& ranked, size_t cls, const std::vector<bool>& excused,
                 size_t records) {
  Curve curve;
  curve.totals.resize(records);
  for (const Ranked& r : ranked) {
    RecordTotals& t = curve.totals[r.record];
    (r.truth == cls ? t.positives : t.negatives) += 1;
    t.items += 1;
    if (r.truth == r.rest) t.right += 1;
  }
  std::vector<size_t> slot(records, SIZE_MAX);  // the record's tally in the current group
  for (size_t i = 0; i < ranked.size() && ranked[i].ratio > 0.0;) {
    const size_t first = curve.calls.size();
    const double ratio = ranked[i].ratio;
    for (; i < ranked.size() && ranked[i].ratio == ratio; ++i) {
      const Ranked& r = ranked[i];
      if (slot[r.record] == SIZE_MAX || slot[r.record] < first) {
        slot[r.record] = curve.calls.size();
        curve.calls.push_back({r.record});
      }
      RecordCalls& t = curve.calls[slot[r.record]];
      if (r.truth == cls)
        t.tp += 1;
      else if (excused[r.truth])
        t.excused += 1;
      else
        t.fp += 1;
      t.right_change += double(r.truth == cls) - double(r.truth == r.rest);
    }
    curve.ratio.push_back(ratio);
    curve.end.push_back(curve.calls.size());
  }
  return curve;
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

// One sweep down the curve's groups, each item weighted by how often its record was drawn: the
// point with the highest Se whose held figure reaches the target, the first (where that figure
// is highest) of equal ones. Items of ratio 0 (the class's probability 0) no finite factor
// calls.
PointOnCurve sweep(const Curve& curve, Held held, double target,
                   const std::vector<double>& weight) {
  // correct: as if no item were called cls; negatives: the items outside the class.
  double positives = 0, negatives = 0, total = 0, correct = 0;
  for (size_t r = 0; r < curve.totals.size(); ++r) {
    const RecordTotals& t = curve.totals[r];
    const double w = weight[r];
    positives += w * t.positives;
    negatives += w * t.negatives;
    total += w * t.items;
    correct += w * t.right;
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
  size_t k = 0;
  for (size_t g = 0; g < curve.ratio.size(); ++g) {
    for (; k < curve.end[g]; ++k) {
      const RecordCalls& t = curve.calls[k];
      const double w = weight[t.record];
      tp += w * t.tp;
      fp += w * t.fp;
      excused_called += w * t.excused;
      correct += w * t.right_change;
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
      best.factor =
          factor_between(curve.ratio[g], g + 1 < curve.ratio.size() ? curve.ratio[g + 1] : 0.0);
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
  const Curve curve = make_curve(ranked, cls, is_excused, items.records);
  PointOnCurve point = sweep(curve, held, target, std::vector<double>(items.records, 1.0));
  std::vector<double> weight(items.records);
  point.se_ci95 = bootstrap_records(
      items.records,
      [&](const std::vector<size_t>& drawn) {
        std::fill(weight.begin(), weight.end(), 0.0);
        for (size_t k : drawn) weight[k] += 1.0;
        return sweep(curve, held, target, weight).se;
      },
      resamples);
  return point;
}

}  // namespace hlm::eval
