// The /metrics server's connections, each on a thread of its own up to a limit: a client that
// trickles its request holds one thread (until the server's per-read timeout), never the
// scrapes behind it. cpp-httplib's fixed pool of a few workers let a handful of such clients
// make every scrape wait until they closed. Beyond the limit, connections wait for a thread.
#pragma once
#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace hlm {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  // A connection accepted: served now on a new thread, or queued at the limit.
  void enqueue(std::function<void()> task) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ < max_threads_) {
      ++running_;
      std::thread([this, task = std::move(task)]() mutable { serve(std::move(task)); }).detach();
    } else {
      waiting_.push_back(std::move(task));
    }
  }

  // Returns when every connection has been served (each ends within the server's timeouts).
  void shutdown() override {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  // Serves the task, then whatever queued meanwhile, then ends the thread.
  void serve(std::function<void()> task) {
    for (;;) {
      task();
      std::lock_guard<std::mutex> lock(mutex_);
      if (waiting_.empty()) {
        --running_;
        idle_.notify_all();  // under the lock: shutdown may destroy this object once it wakes
        return;
      }
      task = std::move(waiting_.front());
      waiting_.pop_front();
    }
  }

  const size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> waiting_;
  size_t running_ = 0;
};

}  // namespace hlm
