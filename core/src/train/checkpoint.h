// Training checkpoints: everything needed to continue a run exactly (model, optimizer, step,
// data position, RNG state, losses so far), written atomically per rank, with a DONE marker
// written last by rank 0 after every rank has finished writing; DONE holds every other
// file's checksum, and a load checks the files it reads against them.
//   <dir>/step_<N>/model.pt, optimizer.pt, rank<r>.pt, meta.json, DONE
#pragma once
#include <torch/torch.h>

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

#include "train/checkpoint_layout.h"

namespace hlm {

// Writes a checkpoint of `step` under dir. Every rank calls it (collective when group is set).
// Then rank 0 removes all but the newest `keep` complete checkpoints (keep <= 0 keeps all).
void save_checkpoint(const std::string& dir, const CheckpointState& state, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, int rank,
                     const c10::intrusive_ptr<c10d::Backend>& group, int keep);

// Loads a checkpoint made by save_checkpoint. Throws CheckpointError when it was made with
// another world size (the data order would differ), is incomplete, a file differs from its
// checksum in DONE, or its meta.json is missing or malformed (the message names the file).
CheckpointState load_checkpoint(const std::string& path, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer, int rank, int world_size);

// Saves / loads one module's parameters and buffers (a LibTorch archive), atomically on save.
// A missing file is a CheckpointError that names it.
void save_module(torch::nn::Module& module, const std::string& path);
// A load puts the tensors on the module's device, whichever device wrote them.
void load_module(torch::nn::Module& module, const std::string& path);

}  // namespace hlm
