// Times the phases of each training step and keeps them, so the loop only says where a phase
// starts, and the result gets per-phase medians that leave out the warm-up steps.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "metrics/train_step.h"

namespace hlm {

enum class Phase { kForward, kBackward, kAllreduce, kOptimizer, kStep };

class PhaseTimer {
 public:
  // Zeroes the step's phase times and starts the step's clock.
  void begin_step();
  // Ends the running phase, if any, and starts `phase`.
  void start(Phase phase);
  // Ends the running phase.
  void stop();
  // Adds time measured elsewhere (a negative value moves time out of a phase).
  void add(Phase phase, double seconds);
  // Ends the running phase and the step, and keeps the step's times.
  void end_step();
  // Seconds of `phase` in the current (or just ended) step.
  double seconds(Phase phase) const { return current_[index(phase)]; }
  // Median over the kept steps after the first `skip_steps`, which include allocator warm-up
  // (negative: skip min(steps / 5, 3)). 0 when no step is left.
  double median(Phase phase, int64_t skip_steps) const;
  // `count` evenly spaced quantiles (minimum to maximum) over the same steps of `phase` less
  // `less` (the same phase: nothing taken off): how much the steps vary, which decides how
  // long ranks in lockstep wait for the slowest.
  std::vector<double> quantiles(Phase phase, Phase less, int64_t skip_steps, int count) const;
  // The current step's phase times into the step's report.
  void fill(TrainStep& step) const;

 private:
  static constexpr size_t kPhases = 5;
  static size_t index(Phase phase) { return static_cast<size_t>(phase); }
  std::vector<double> kept_seconds(Phase phase, Phase less, int64_t skip_steps) const;
  std::array<double, kPhases> current_{};
  std::vector<std::array<double, kPhases>> kept_;
  int running_ = -1;  // index of the running phase, -1 when none
  double running_since_ = 0, step_start_ = 0;
};

}  // namespace hlm
