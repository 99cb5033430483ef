// Per-phase step timing (see phase_timer.h).
#include "train/phase_timer.h"

#include <algorithm>
#include <cmath>

#include "hlm/util.h"

namespace hlm {

void PhaseTimer::begin_step() {
  current_.fill(0);
  running_ = -1;
  step_start_ = now_seconds();
}

void PhaseTimer::start(Phase phase) {
  stop();
  running_ = int(index(phase));
  running_since_ = now_seconds();
}

void PhaseTimer::stop() {
  if (running_ < 0) return;
  current_[size_t(running_)] += now_seconds() - running_since_;
  running_ = -1;
}

void PhaseTimer::add(Phase phase, double seconds) { current_[index(phase)] += seconds; }

void PhaseTimer::end_step() {
  stop();
  current_[index(Phase::kStep)] = now_seconds() - step_start_;
  kept_.push_back(current_);
}

std::vector<double> PhaseTimer::kept_seconds(Phase phase, Phase less, int64_t skip_steps) const {
  const size_t skip = skip_steps >= 0 ? std::min(kept_.size(), size_t(skip_steps))
                                      : std::min<size_t>(kept_.size() / 5, 3);
  std::vector<double> times;
  for (size_t i = skip; i < kept_.size(); ++i)
    times.push_back(kept_[i][index(phase)] - (less == phase ? 0 : kept_[i][index(less)]));
  return times;
}

double PhaseTimer::median(Phase phase, int64_t skip_steps) const {
  std::vector<double> times = kept_seconds(phase, phase, skip_steps);
  if (times.empty()) return 0;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

std::vector<double> PhaseTimer::quantiles(Phase phase, Phase less, int64_t skip_steps,
                                          int count) const {
  std::vector<double> times = kept_seconds(phase, less, skip_steps);
  if (times.empty() || count < 2) return {};
  std::sort(times.begin(), times.end());
  std::vector<double> q;
  for (int k = 0; k < count; ++k)
    q.push_back(times[size_t(std::lround(double(k) / (count - 1) * double(times.size() - 1)))]);
  return q;
}

void PhaseTimer::fill(TrainStep& step) const {
  step.step_seconds = seconds(Phase::kStep);
  step.forward_seconds = seconds(Phase::kForward);
  step.backward_seconds = seconds(Phase::kBackward);
  step.allreduce_seconds = seconds(Phase::kAllreduce);
  step.optimizer_seconds = seconds(Phase::kOptimizer);
}

}  // namespace hlm
