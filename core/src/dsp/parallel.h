// A minimal deterministic parallel loop: [0, n) cut into fixed-size chunks, handed to at most
// `threads` std::threads (0 = hardware concurrency), run inline when one thread suffices.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace hlm::dsp {

template <class Fn>
void parallel_chunks(size_t n, size_t chunk, int threads, Fn fn) {
  const size_t chunks = (n + chunk - 1) / chunk;
  size_t workers =
      threads > 0 ? size_t(threads) : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, chunks);
  if (workers <= 1) {
    for (size_t c = 0; c < chunks; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c = next++; c < chunks; c = next++) fn(c * chunk, std::min(n, (c + 1) * chunk));
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace hlm::dsp
