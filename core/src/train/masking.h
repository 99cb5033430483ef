// Masked-language-model corruption (RoBERTa's 80/10/10) for the masked objective: which tokens
// the model must predict, and what it sees in their place.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace hlm {

// cross_entropy's default ignore_index: targets that take no part in the loss.
constexpr int64_t kIgnoreTarget = -100;

struct MaskedBatch {
  at::Tensor inputs;   // int64, tokens with the chosen positions corrupted
  at::Tensor targets;  // int64, the original token where chosen, kIgnoreTarget elsewhere
};

// Chooses each content token (id >= kFirstContentToken) with the given probability; special
// tokens (PAD, BOS, MASK, UNK) are never chosen. A chosen token becomes MASK with probability
// 0.8, a random content token in [kFirstContentToken, vocab_size) with 0.1, and stays as it
// is with 0.1. When no token is chosen but some content token exists, one is chosen anyway, so
// the loss is never an empty mean. tokens: int64 on the CPU, any shape. Draws only from
// generator, so the same generator state gives the same batch on any thread count.
MaskedBatch mask_tokens(const at::Tensor& tokens, double probability, int64_t vocab_size,
                        at::Generator& generator);

// The same with a fresh generator seeded with seed (e.g. derived from run seed, step and rank).
MaskedBatch mask_tokens(const at::Tensor& tokens, double probability, int64_t vocab_size,
                        uint64_t seed);

}  // namespace hlm
