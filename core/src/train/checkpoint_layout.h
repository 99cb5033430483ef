// What a checkpoint folder holds and how it is checked, without LibTorch (the tensors are
// written and read in checkpoint.h):
//   <dir>/step_<N>/model.pt, optimizer.pt, rank<r>.pt, meta.json, DONE
// A step folder is complete once it holds DONE, which rank 0 writes last with the FNV-1a
// checksum of every other file: a file changed afterwards (a flipped bit, a truncation, a
// copy cut short) no longer matches and is never loaded as if it were what was saved.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hlm {

struct CheckpointState {
  int64_t step = 0;  // optimizer steps completed
  int world_size = 1;
  std::vector<double> losses;  // per applied step (rank 0)
  double train_seconds = 0;    // training-loop time of every run segment so far
  int64_t skipped_steps = 0;   // steps not applied for a non-finite loss or gradient
};

std::string checkpoint_step_dir(const std::string& dir, int64_t step);

// Steps of the complete checkpoints (with DONE) under dir, ascending; none when dir is absent.
std::vector<int64_t> complete_checkpoint_steps(const std::string& dir);

// The newest complete checkpoint under dir (one with DONE), or "" when there is none.
std::string latest_checkpoint(const std::string& dir);

// {file name: checksum} for every file of a step folder but DONE and temp files: DONE's body.
nlohmann::json checkpoint_checksums(const std::string& step_folder);

// Checks `files` of the step folder at path against DONE's checksums; a CheckpointError
// naming the file and the folder to delete when one is missing or differs. A DONE without
// checksums (written before checkpoints carried them) is trusted as it is.
void verify_checkpoint_checksums(const std::string& path, const std::vector<std::string>& files);

// The step folder's meta.json. A file that is missing, does not parse, or lacks a key (or has
// one of the wrong type) means this checkpoint is damaged while older ones may be fine: a
// CheckpointError naming the file, not nlohmann's bare parse_error or out_of_range.
CheckpointState read_checkpoint_meta(const std::string& path);

}  // namespace hlm
