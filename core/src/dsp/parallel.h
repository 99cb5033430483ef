// A minimal deterministic parallel loop: [0, n) cut into fixed-size chunks, handed to at most
// `threads` workers (0 = hardware concurrency), run inline when one thread suffices. Built on
// hlm::parallel_for, so an exception in a worker reaches the caller.
#pragma once
#include <algorithm>
#include <cstddef>
#include <thread>

#include "util/parallel.h"

namespace hlm::dsp {

template <class Fn>
void parallel_chunks(size_t n, size_t chunk, int threads, Fn fn) {
  const size_t chunks = (n + chunk - 1) / chunk;
  const int workers =
      threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
  parallel_for(chunks, workers, [&](size_t c) { fn(c * chunk, std::min(n, (c + 1) * chunk)); });
}

}  // namespace hlm::dsp
