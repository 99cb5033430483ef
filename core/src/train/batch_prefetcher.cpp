// Double-buffered batch assembly (see batch_prefetcher.h).
#include "train/batch_prefetcher.h"

#include "hlm/util.h"

namespace hlm {

BatchPrefetcher::BatchPrefetcher(const WindowSampler& sampler, int64_t rows,
                                 std::function<uint64_t(int64_t)> first_sample, int64_t start)
    : sampler_(sampler),
      first_sample_(std::move(first_sample)),
      produced_(start),
      consumed_(start) {
  for (int s = 0; s < 2; ++s) {
    inputs_[s] = torch::empty({rows, sampler.context()}, torch::kLong);
    targets_[s] = torch::empty({rows, sampler.context()}, torch::kLong);
  }
  worker_ = std::thread([this] { produce(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void BatchPrefetcher::produce() {
  for (;;) {
    int slot;
    int64_t k;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      k = produced_;
      slot = int(k % 2);
      // Batch k reuses the buffers of batch k - 2: wait until the consumer is done with it.
      changed_.wait(lock, [&] { return stop_ || (!ready_[slot] && in_use_ != slot); });
      if (stop_) return;
    }
    sampler_.fill(first_sample_(k), inputs_[slot], targets_[slot]);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_[slot] = true;
      ++produced_;
    }
    changed_.notify_all();
  }
}

BatchPrefetcher::Batch BatchPrefetcher::next(double* wait_seconds) {
  const double start = now_seconds();
  std::unique_lock<std::mutex> lock(mutex_);
  in_use_ = -1;  // the batch handed out last time is done with
  changed_.notify_all();
  const int slot = int(consumed_ % 2);
  changed_.wait(lock, [&] { return ready_[slot]; });
  ready_[slot] = false;
  in_use_ = slot;
  ++consumed_;
  changed_.notify_all();
  if (wait_seconds) *wait_seconds += now_seconds() - start;
  return {inputs_[slot], targets_[slot]};
}

}  // namespace hlm
