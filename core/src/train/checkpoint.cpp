// Checkpoint files (see checkpoint.h). Files go to a .tmp name, are fsynced and renamed; the
// step folder gets its DONE marker only after a barrier, so a crash at any point leaves
// either a complete checkpoint or one that resume ignores.
#include "train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "train/train_device.h"
#include "util/atomic_file.h"

namespace fs = std::filesystem;

namespace hlm {
namespace {

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// An archive is serialised into memory, then written with write_file_atomic. LibTorch's own
// file writer finishes the zip in its destructor and throws from there when the disk is full
// (seen with RLIMIT_FSIZE: "unexpected pos 64 vs 0"), which ends the process in
// std::terminate instead of reporting which file could not be written.
void write_archive(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_file_atomic(path, bytes.str());
}

void barrier(const c10::intrusive_ptr<c10d::Backend>& group) {
  if (group) group->barrier()->wait();
}

}  // namespace

void save_checkpoint(const std::string& dir, const CheckpointState& state, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, int rank,
                     const c10::intrusive_ptr<c10d::Backend>& group, int keep) {
  const std::string out = checkpoint_step_dir(dir, state.step);
  fs::create_directories(out);
  // Per rank: the RNG state (dropout); model and optimizer are identical on every rank after
  // the all-reduce, so rank 0 writes them once.
  {
    torch::serialize::OutputArchive archive;
    archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
    // A GPU's dropout draws from that GPU's generator.
    if (const torch::Device device = device_of(model); device.is_cuda())
      archive.write("cuda_rng", at::globalContext().defaultGenerator(device).get_state());
    write_archive(archive, out + "/rank" + std::to_string(rank) + ".pt");
  }
  if (rank == 0) {
    torch::serialize::OutputArchive model_archive, optimizer_archive;
    model.save(model_archive);
    write_archive(model_archive, out + "/model.pt");
    optimizer.save(optimizer_archive);
    write_archive(optimizer_archive, out + "/optimizer.pt");
    const nlohmann::json meta = {{"step", state.step},
                                 {"world_size", state.world_size},
                                 {"losses", state.losses},
                                 {"train_seconds", state.train_seconds},
                                 {"skipped_steps", state.skipped_steps}};
    write_file_atomic(out + "/meta.json", meta.dump() + "\n");
  }
  barrier(group);  // every rank's files are durable before the marker
  if (rank == 0) {
    fsync_path(out);  // their names in the step folder too
    const nlohmann::json marker = {{"fnv1a64", checkpoint_checksums(out)}};
    write_file_atomic(out + "/DONE", marker.dump(1) + "\n");
    fsync_path(out);
    fsync_path(dir);
    const std::vector<int64_t> steps = complete_checkpoint_steps(dir);
    for (size_t i = 0; keep > 0 && i + size_t(keep) < steps.size(); ++i) {
      // DONE first: a crash mid-removal leaves a folder resume ignores, never a half one it trusts.
      fs::remove(checkpoint_step_dir(dir, steps[i]) + "/DONE");
      fsync_path(checkpoint_step_dir(dir, steps[i]));
      fs::remove_all(checkpoint_step_dir(dir, steps[i]));
    }
  }
  barrier(group);
}

CheckpointState load_checkpoint(const std::string& path, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer, int rank, int world_size) {
  if (!fs::exists(path + "/DONE"))
    throw CheckpointError(
        "{}: incomplete checkpoint (no DONE marker); delete it to resume from the one before",
        path);
  const std::string rank_name = "rank" + std::to_string(rank) + ".pt";
  verify_checkpoint_checksums(path, {"meta.json", "model.pt", "optimizer.pt", rank_name});
  const CheckpointState state = read_checkpoint_meta(path);
  if (state.world_size != world_size)
    throw CheckpointError(
        "{}: made with world size {}, this run has {}; resume with the same number of ranks "
        "(the data order depends on it)",
        path, state.world_size, world_size);
  torch::serialize::InputArchive model_archive, optimizer_archive, rank_archive;
  // Onto the module's device, whichever device wrote the files (LibTorch would otherwise move
  // a GPU parameter to the CPU when it reads a CPU-written one).
  const torch::Device device = device_of(model);
  model_archive.load_from(path + "/model.pt", device);
  model.load(model_archive);
  optimizer_archive.load_from(path + "/optimizer.pt", device);
  optimizer.load(optimizer_archive);
  const std::string rank_file = path + "/" + rank_name;
  if (!fs::exists(rank_file))
    throw CheckpointError("{}: missing; the checkpoint is damaged", rank_file);
  rank_archive.load_from(rank_file);
  at::Tensor rng, cuda_rng;
  rank_archive.read("rng", rng);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  generator.set_state(rng);
  if (device.is_cuda() && rank_archive.try_read("cuda_rng", cuda_rng)) {
    at::Generator gpu_generator = at::globalContext().defaultGenerator(device);
    gpu_generator.set_state(cuda_rng);
  }
  return state;
}

void save_module(torch::nn::Module& module, const std::string& path) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  write_archive(archive, path);
}

void load_module(torch::nn::Module& module, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw CheckpointError("{}: checkpoint not found; re-run the stage that writes it", path);
  torch::serialize::InputArchive archive;
  archive.load_from(path, device_of(module));
  module.load(archive);
}

}  // namespace hlm
