// Deterministic sliding-window batches from a memory-mapped token store. Sample i of the run
// is a pure function of (seed, i), so a rank only needs the step number to resume, and world
// size N with batch B draws exactly the samples world size 1 draws with batch N*B.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "hlm/token_store.h"

namespace hlm {

class WindowSampler {
 public:
  // Windows start in [begin, end - context - 1]; end is clamped to the store's size.
  WindowSampler(const TokenStore& store, uint64_t begin, uint64_t end, int64_t context,
                uint64_t seed);
  // Fills inputs and targets ([rows, context] int64) with samples first .. first + rows - 1.
  void fill(uint64_t first_sample, at::Tensor& inputs, at::Tensor& targets) const;
  uint64_t window_start(uint64_t sample) const;
  int64_t context() const { return context_; }

 private:
  const TokenStore& store_;
  uint64_t begin_, range_;
  int64_t context_;
  uint64_t seed_;
};

}  // namespace hlm
