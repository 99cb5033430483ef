// Assembles the next batch on a background thread while the model computes on the current
// one, in two reusable buffers (util/double_buffer.h), so the trainer only waits for data
// when loading is slower than a step (that wait is what hlm_data_wait_seconds_total
// measures).
#pragma once
#include <torch/torch.h>

#include <functional>

#include "train/window_sampler.h"
#include "util/double_buffer.h"

namespace hlm {

class BatchPrefetcher {
 public:
  // Batch k holds samples first_sample(k) .. first_sample(k) + rows - 1; k counts from start.
  // With `pinned` the buffers are in page-locked memory, from which a GPU copies without
  // blocking; a buffer is refilled only after the next call to next(), so the caller must have
  // waited for its copy by then (the trainer's loss.item() does).
  BatchPrefetcher(const WindowSampler& sampler, int64_t rows,
                  std::function<uint64_t(int64_t)> first_sample, int64_t start,
                  bool pinned = false);

  struct Batch {
    at::Tensor inputs, targets;  // valid until the next call to next()
  };
  // The next batch in order; adds the seconds spent waiting for it to *wait_seconds.
  Batch next(double* wait_seconds) { return buffers_.next(wait_seconds); }

 private:
  DoubleBuffer<Batch> buffers_;
};

}  // namespace hlm
