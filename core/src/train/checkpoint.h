// Training checkpoints: everything needed to continue a run exactly (model, optimizer, step,
// data position, RNG state, losses so far), written atomically per rank, with a DONE marker
// written last by rank 0 after every rank has finished writing.
//   <dir>/step_<N>/model.pt, optimizer.pt, rank<r>.pt, meta.json, DONE
#pragma once
#include <torch/torch.h>

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

namespace hlm {

struct CheckpointState {
  int64_t step = 0;  // optimizer steps completed
  int world_size = 1;
  std::vector<double> losses;  // per completed step (rank 0)
  double train_seconds = 0;    // training-loop time of every run segment so far
};

// Writes a checkpoint of `step` under dir. Every rank calls it (collective when group is set).
// Then rank 0 removes all but the newest `keep` complete checkpoints (keep <= 0 keeps all).
void save_checkpoint(const std::string& dir, const CheckpointState& state, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, int rank,
                     const c10::intrusive_ptr<c10d::ProcessGroup>& group, int keep);

// The newest complete checkpoint under dir (one with DONE), or "" when there is none.
std::string latest_checkpoint(const std::string& dir);

// Loads a checkpoint made by save_checkpoint. Throws CheckpointError when it was made with
// another world size (the data order would differ), is incomplete, or its meta.json is
// missing or malformed (the message names the file).
CheckpointState load_checkpoint(const std::string& path, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer, int rank, int world_size);

// Saves / loads one module's parameters and buffers (a LibTorch archive), atomically on save.
// A missing file is a CheckpointError that names it.
void save_module(torch::nn::Module& module, const std::string& path);
void load_module(torch::nn::Module& module, const std::string& path);

}  // namespace hlm
