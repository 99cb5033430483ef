// Makes items one after another on a background thread into two reusable buffers while the
// consumer works on the previous item, so the consumer waits only when making an item is
// slower than using one. The batch prefetcher (train/batch_prefetcher.h) is this with two
// tensors per buffer; kept apart from LibTorch so the sanitizer builds test the threading.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace hlm {

template <class Buffer>
class DoubleBuffer {
 public:
  // fill(k, buffer) makes item k into buffer on the background thread; k counts from start.
  DoubleBuffer(Buffer first, Buffer second, std::function<void(int64_t, Buffer&)> fill,
               int64_t start)
      : buffers_{std::move(first), std::move(second)},
        fill_(std::move(fill)),
        produced_(start),
        consumed_(start),
        worker_([this] { produce(); }) {}

  ~DoubleBuffer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  DoubleBuffer(const DoubleBuffer&) = delete;
  DoubleBuffer& operator=(const DoubleBuffer&) = delete;

  // The next item in order, valid until the next call; adds the seconds spent waiting for it
  // to *wait_seconds.
  Buffer& next(double* wait_seconds) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    in_use_ = -1;  // the item handed out last time is done with
    changed_.notify_all();
    const int slot = int(consumed_ % 2);
    changed_.wait(lock, [&] { return ready_[slot]; });
    ready_[slot] = false;
    in_use_ = slot;
    ++consumed_;
    changed_.notify_all();
    if (wait_seconds)
      *wait_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return buffers_[slot];
  }

 private:
  void produce() {
    for (;;) {
      int slot;
      int64_t k;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        k = produced_;
        slot = int(k % 2);
        // Item k reuses the buffer of item k - 2: wait until the consumer is done with it.
        changed_.wait(lock, [&] { return stop_ || (!ready_[slot] && in_use_ != slot); });
        if (stop_) return;
      }
      fill_(k, buffers_[slot]);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_[slot] = true;
        ++produced_;
      }
      changed_.notify_all();
    }
  }

  Buffer buffers_[2];
  std::function<void(int64_t, Buffer&)> fill_;
  bool ready_[2] = {false, false};  // filled and not yet handed out
  int in_use_ = -1;                 // slot the consumer holds, -1 for none
  int64_t produced_, consumed_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread worker_;  // last: started once everything above is set
};

}  // namespace hlm
