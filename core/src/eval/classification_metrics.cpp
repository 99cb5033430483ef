// Classification scores and record bootstrap (see classification_metrics.h).
#include "eval/classification_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "hlm/errors.h"

namespace hlm::eval {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(int64_t num, int64_t den) { return den > 0 ? double(num) / double(den) : kNaN; }
}  // namespace

Confusion::Confusion(size_t classes) : classes_(classes), counts_(classes * classes, 0) {
  if (classes == 0) throw InternalError("a confusion matrix needs at least one class");
}

void Confusion::add(size_t truth, size_t predicted, int64_t count) {
  if (truth >= classes_ || predicted >= classes_)
    throw InternalError("confusion matrix of {} classes: no class {} or {}", classes_, truth,
                        predicted);
  counts_[truth * classes_ + predicted] += count;
}

Confusion& Confusion::operator+=(const Confusion& other) {
  if (other.classes_ != classes_)
    throw InternalError("adding a confusion matrix of {} classes to one of {}", other.classes_,
                        classes_);
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  return *this;
}

int64_t Confusion::total() const {
  int64_t sum = 0;
  for (const int64_t v : counts_) sum += v;
  return sum;
}

int64_t Confusion::support(size_t c) const {
  int64_t sum = 0;
  for (size_t p = 0; p < classes_; ++p) sum += at(c, p);
  return sum;
}

int64_t Confusion::predicted(size_t c) const {
  int64_t sum = 0;
  for (size_t t = 0; t < classes_; ++t) sum += at(t, c);
  return sum;
}

ClassScores class_scores(const Confusion& m, size_t c) {
  ClassScores s;
  s.support = m.support(c);
  s.predicted = m.predicted(c);
  s.tp = m.at(c, c);
  const int64_t fp = s.predicted - s.tp, negatives = m.total() - s.support;
  s.se = ratio(s.tp, s.support);
  s.ppv = ratio(s.tp, s.predicted);
  s.specificity = ratio(negatives - fp, negatives);
  s.f1 = ratio(2 * s.tp, s.support + s.predicted);
  return s;
}

EctopicScores ectopic_scores(const Confusion& m, size_t ectopic,
                             const std::vector<size_t>& excused) {
  EctopicScores s;
  for (size_t t = 0; t < m.classes(); ++t)
    for (size_t p = 0; p < m.classes(); ++p) {
      const int64_t n = m.at(t, p);
      if (t == ectopic)
        (p == ectopic ? s.tp : s.fn) += n;
      else if (p == ectopic) {
        if (std::find(excused.begin(), excused.end(), t) == excused.end()) s.fp += n;
      } else
        s.tn += n;
    }
  s.se = ratio(s.tp, s.tp + s.fn);
  s.ppv = ratio(s.tp, s.tp + s.fp);
  s.fpr = ratio(s.fp, s.fp + s.tn);
  return s;
}

double accuracy(const Confusion& m) {
  int64_t correct = 0;
  for (size_t c = 0; c < m.classes(); ++c) correct += m.at(c, c);
  return ratio(correct, m.total());
}

double macro_f1(const Confusion& m) {
  double sum = 0;
  int counted = 0;
  for (size_t c = 0; c < m.classes(); ++c)
    if (m.support(c) > 0) sum += class_scores(m, c).f1, ++counted;
  return counted ? sum / counted : kNaN;
}

double mean_f1(const Confusion& m, const std::vector<size_t>& classes) {
  if (classes.empty()) return kNaN;
  double sum = 0;
  for (const size_t c : classes) {
    const double f1 = class_scores(m, c).f1;
    sum += std::isnan(f1) ? 0.0 : f1;
  }
  return sum / double(classes.size());
}

size_t majority_class(const Confusion& m) {
  size_t best = 0;
  for (size_t c = 1; c < m.classes(); ++c)
    if (m.support(c) > m.support(best)) best = c;
  return best;
}

double majority_baseline(const Confusion& m) {
  return ratio(m.support(majority_class(m)), m.total());
}

Confusion always_answering(const Confusion& m, size_t c) {
  Confusion out(m.classes());
  for (size_t t = 0; t < m.classes(); ++t) out.add(t, c, m.support(t));
  return out;
}

double auroc(const std::vector<double>& scores, const std::vector<int>& labels) {
  if (scores.size() != labels.size())
    throw InternalError("auroc: {} scores but {} labels", scores.size(), labels.size());
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney U from the positives' ranks; tied scores share their mean rank.
  double positive_rank_sum = 0;
  int64_t positives = 0, negatives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = 0.5 * double(i + 1 + j);
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] == 1)
        positive_rank_sum += mean_rank, ++positives;
      else
        ++negatives;
    }
    i = j;
  }
  if (positives == 0 || negatives == 0) return kNaN;
  const double u = positive_rank_sum - double(positives) * double(positives + 1) / 2.0;
  return u / (double(positives) * double(negatives));
}

Confusion pooled(const std::vector<Confusion>& per_record, size_t classes) {
  Confusion all(classes);
  for (const auto& m : per_record) all += m;
  return all;
}

namespace {

// The percentile interval (level) of the metric's values over the samples, NaNs left out.
Interval percentile_interval(std::vector<double> values, double level) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               values.end());
  if (values.empty()) return {kNaN, kNaN};
  std::sort(values.begin(), values.end());
  // The percentile at fraction q of the sorted values, interpolated between neighbours.
  auto quantile = [&](double q) {
    const double at = q * double(values.size() - 1);
    const size_t below = size_t(std::floor(at));
    const size_t above = std::min(values.size() - 1, below + 1);
    return values[below] + (at - double(below)) * (values[above] - values[below]);
  };
  const double tail = 0.5 * (1.0 - level);
  return {quantile(tail), quantile(1.0 - tail)};
}

// `resamples` draws of record indices with replacement, each as many as there are records;
// sample(indices) gives the metric of one draw.
std::vector<double> resample_records(
    size_t records, int resamples, uint64_t seed,
    const std::function<double(const std::vector<size_t>&)>& sample) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, records - 1);
  std::vector<double> values;
  std::vector<size_t> drawn(records);
  values.reserve(size_t(std::max(resamples, 0)));
  for (int r = 0; r < resamples; ++r) {
    for (size_t& k : drawn) k = pick(rng);
    values.push_back(sample(drawn));
  }
  return values;
}

Confusion pooled_over(const std::vector<Confusion>& per_record, const std::vector<size_t>& drawn) {
  Confusion pooled(per_record.front().classes());
  for (size_t k : drawn) pooled += per_record[k];
  return pooled;
}

}  // namespace

Interval bootstrap_records(size_t records,
                           const std::function<double(const std::vector<size_t>& drawn)>& sample,
                           int resamples, double level, uint64_t seed) {
  if (records == 0) return {kNaN, kNaN};
  return percentile_interval(resample_records(records, resamples, seed, sample), level);
}

Interval bootstrap_by_record(const std::vector<Confusion>& per_record,
                             const std::function<double(const Confusion&)>& metric, int resamples,
                             double level, uint64_t seed) {
  return bootstrap_records(
      per_record.size(),
      [&](const std::vector<size_t>& drawn) { return metric(pooled_over(per_record, drawn)); },
      resamples, level, seed);
}

Interval bootstrap_difference_by_record(const std::vector<Confusion>& a,
                                        const std::vector<Confusion>& b,
                                        const std::function<double(const Confusion&)>& metric,
                                        int resamples, double level, uint64_t seed) {
  if (a.size() != b.size())
    throw std::invalid_argument("bootstrap_difference_by_record: " + std::to_string(a.size()) +
                                " records against " + std::to_string(b.size()));
  return bootstrap_records(
      a.size(),
      [&](const std::vector<size_t>& drawn) {
        return metric(pooled_over(a, drawn)) - metric(pooled_over(b, drawn));
      },
      resamples, level, seed);
}

}  // namespace hlm::eval
