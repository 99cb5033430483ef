// One optimizer step on one rank, as the trainer reports it to metrics and the log. Plain
// numbers, no LibTorch: libhlm_base's metrics take it as it is.
#pragma once
#include <cstdint>

namespace hlm {

struct TrainStep {
  int64_t step = 0;  // 1-based optimizer step
  double loss = 0, learning_rate = 0, grad_norm = 0;
  int64_t rank_tokens = 0;       // tokens this rank consumed in the step (all micro-batches)
  int64_t rank_samples = 0;      // windows (sequences) this rank consumed in the step
  double step_seconds = 0;       // wall time of the whole step
  double data_wait_seconds = 0;  // waiting for the batch prefetcher
  // Where the step went, micro-steps summed: forward and loss; backward without the all-reduce
  // launched from its gradient hooks; the all-reduce; clipping and the optimizer update.
  double forward_seconds = 0, backward_seconds = 0, allreduce_seconds = 0, optimizer_seconds = 0;
  double mfu_ratio = -1;  // model FLOPs utilisation in [0, 1]; < 0 when unknown
};

}  // namespace hlm
