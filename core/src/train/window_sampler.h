// Deterministic sliding-window batches from memory-mapped token stores. Sample i of the run
// is a pure function of (seed, i), so a rank only needs the step number to resume, and world
// size N with batch B draws exactly the samples world size 1 draws with batch N*B.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "hlm/token_store.h"

namespace hlm {

// The tokens [begin, end) of one store (end clamped to its size), drawn from with a share of
// weight over the sum of the spans' weights.
struct TokenSpan {
  const TokenStore* store = nullptr;
  uint64_t begin = 0, end = 0;
  double weight = 1.0;
};

class WindowSampler {
 public:
  // Windows start in [begin, end - context - 1]; end is clamped to the store's size.
  WindowSampler(const TokenStore& store, uint64_t begin, uint64_t end, int64_t context,
                uint64_t seed);
  // Windows from several stores (one model pretrained on beat and rhythm tokens): each sample
  // picks a span by weight, then a window inside it, so a window never spans two stores. One
  // span draws the windows of the constructor above. Throws DataError when a span holds less
  // than one window or no weight is positive.
  WindowSampler(std::vector<TokenSpan> spans, int64_t context, uint64_t seed);
  // Fills inputs and targets ([rows, context] int64) with samples first .. first + rows - 1.
  void fill(uint64_t first_sample, at::Tensor& inputs, at::Tensor& targets) const;
  // The span sample `sample` is drawn from, and its window's first token there.
  struct Window {
    size_t span = 0;
    uint64_t start = 0;
  };
  Window window(uint64_t sample) const;
  int64_t context() const { return context_; }

 private:
  struct Range {
    const TokenStore* store;
    uint64_t begin, count;  // window starts begin .. begin + count - 1
  };
  std::vector<Range> ranges_;
  std::vector<double> cumulative_;  // the spans' weights summed, normalised to end at 1
  int64_t context_;
  uint64_t seed_;
};

}  // namespace hlm
