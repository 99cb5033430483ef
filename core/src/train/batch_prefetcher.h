// Assembles the next batch on a background thread while the model computes on the current
// one, in two reusable buffers, so the trainer only waits for data when loading is slower
// than a step (that wait is what hlm_data_wait_seconds_total measures).
#pragma once
#include <torch/torch.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "train/window_sampler.h"

namespace hlm {

class BatchPrefetcher {
 public:
  // Batch k holds samples first_sample(k) .. first_sample(k) + rows - 1; k counts from start.
  BatchPrefetcher(const WindowSampler& sampler, int64_t rows,
                  std::function<uint64_t(int64_t)> first_sample, int64_t start);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  struct Batch {
    at::Tensor inputs, targets;  // valid until the next call to next()
  };
  // The next batch in order; adds the seconds spent waiting for it to *wait_seconds.
  Batch next(double* wait_seconds);

 private:
  void produce();

  const WindowSampler& sampler_;
  std::function<uint64_t(int64_t)> first_sample_;
  at::Tensor inputs_[2], targets_[2];
  bool ready_[2] = {false, false};  // filled and not yet handed out
  int in_use_ = -1;                 // slot the consumer holds, -1 for none
  int64_t produced_, consumed_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread worker_;
};

}  // namespace hlm
