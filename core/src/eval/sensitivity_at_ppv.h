// How sensitive a classifier is for one class at a given positive predictivity. Published beat
// classifiers each report one operating point, most of them with S sensitivity high and +P
// low, so two methods compare fairly only at equal +P. The curve here is made the way the
// operating point of a probabilistic classifier moves: the class's probability multiplied by
// a factor before the most probable class is taken. An item is then called the class when
// factor x its probability exceeds the largest of the others', i.e. when their ratio exceeds
// 1 / factor, so sorting the items by that ratio gives every point of the curve at once.
//
// The factor is read off the very items scored: like AUROC, the result is a property of the
// curve, not an operating point fixed in advance.
#pragma once
#include <cstddef>
#include <vector>

#include "eval/classification_metrics.h"

namespace hlm::eval {

// Items as parallel arrays: item i's class probabilities, reference class, and record
// (0 .. records - 1, for the bootstrap by record).
struct ProbabilityItems {
  std::vector<std::vector<float>> probs;
  std::vector<size_t> truth;
  std::vector<size_t> record;
  size_t records = 0;
};

struct PointAtPpv {
  bool reached = false;  // some factor gives +P >= the target
  // The highest Se over the factors that keep +P at or above the target, and of the points
  // with that Se the one with the highest +P; 0 when no factor reaches the target, NaN when
  // the class has no reference item. The +P, factor and accuracy (every item, every class) of
  // that point are NaN when it is not reached. The factor lies strictly inside the range of
  // factors that give the point (between the ratios of the last item called and the next).
  double se = 0, ppv = 0, factor = 0, accuracy = 0;
  // Resampling records: a resample that cannot reach the target counts Se 0; one without an
  // item of the class is left out (its Se is NaN).
  Interval se_ci95;
};

// Class `cls` against the rest, where items of the `excused` reference classes called `cls`
// count neither as true nor as false positives (EC57: fusion and Q beats called V, Q beats
// called S; see ectopic_scores). Throws InternalError on arrays of unequal length, fewer than
// two classes, a class or record out of range, a probability that is negative or not finite,
// or a target outside (0, 1]: the callers check what users give.
PointAtPpv sensitivity_at_ppv(const ProbabilityItems& items, size_t cls,
                              const std::vector<size_t>& excused, double target_ppv,
                              int resamples = 1000);

}  // namespace hlm::eval
