// parallel_for: runs fn(i) for i in [0, n) on `threads` workers pulling indices in order (one
// worker is the calling thread). An exception in fn is re-thrown on the caller's thread after
// all workers stop. The one thread pool of hlm; dsp::parallel_chunks is built on it.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hlm {

template <class Fn>
void parallel_for(size_t n, int threads, Fn fn) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  const int count = std::max(1, std::min<int>(threads, int(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < count; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace hlm
