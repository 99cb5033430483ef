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

#include "hlm/errors.h"
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

void barrier(const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  if (group) group->barrier()->wait();
}

std::string step_dir(const std::string& dir, int64_t step) {
  return dir + "/step_" + std::to_string(step);
}

// Steps of the complete checkpoints (with DONE) under dir, ascending.
std::vector<int64_t> complete_steps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || !fs::exists(entry.path() / "DONE")) continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (*end == '\0') steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// The step folder's meta.json. A file that is missing, does not parse, or lacks a key (or has
// one of the wrong type) means this checkpoint is damaged while older ones may be fine: a
// CheckpointError naming the file, not nlohmann's bare parse_error or out_of_range.
CheckpointState read_meta(const std::string& path) {
  const std::string meta_path = path + "/meta.json";
  std::ifstream meta_file(meta_path);
  if (!meta_file)
    throw CheckpointError(
        "{}: missing; the checkpoint is damaged: delete {} to resume from the one before",
        meta_path, path);
  try {
    const auto meta = nlohmann::json::parse(meta_file);
    CheckpointState state;
    state.step = meta.at("step").get<int64_t>();
    state.world_size = meta.at("world_size").get<int>();
    state.losses = meta.at("losses").get<std::vector<double>>();
    state.train_seconds = meta.value("train_seconds", 0.0);
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(
        "{}: not valid checkpoint metadata ({}); the checkpoint is damaged: "
        "delete {} to resume from the one before",
        meta_path, e.what(), path);
  }
}

}  // namespace

void save_checkpoint(const std::string& dir, const CheckpointState& state, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, int rank,
                     const c10::intrusive_ptr<c10d::ProcessGroup>& group, int keep) {
  const std::string out = step_dir(dir, state.step);
  fs::create_directories(out);
  // Per rank: the RNG state (dropout); model and optimizer are identical on every rank after
  // the all-reduce, so rank 0 writes them once.
  write_file_atomic(out + "/rank" + std::to_string(rank) + ".pt", [&](const std::string& tmp) {
    torch::serialize::OutputArchive archive;
    archive.write("rng", at::detail::getDefaultCPUGenerator().get_state());
    archive.save_to(tmp);
  });
  if (rank == 0) {
    write_file_atomic(out + "/model.pt", [&](const std::string& tmp) {
      torch::serialize::OutputArchive archive;
      model.save(archive);
      archive.save_to(tmp);
    });
    write_file_atomic(out + "/optimizer.pt", [&](const std::string& tmp) {
      torch::serialize::OutputArchive archive;
      optimizer.save(archive);
      archive.save_to(tmp);
    });
    write_file_atomic(out + "/meta.json", [&](const std::string& tmp) {
      nlohmann::json meta = {{"step", state.step},
                             {"world_size", state.world_size},
                             {"losses", state.losses},
                             {"train_seconds", state.train_seconds}};
      std::ofstream(tmp) << meta.dump() << '\n';
    });
  }
  barrier(group);  // every rank's files are durable before the marker
  if (rank == 0) {
    fsync_path(out);  // their names in the step folder too
    write_file_atomic(out + "/DONE",
                      [](const std::string& tmp) { std::ofstream(tmp) << "done\n"; });
    fsync_path(out);
    fsync_path(dir);
    const std::vector<int64_t> steps = complete_steps(dir);
    for (size_t i = 0; keep > 0 && i + size_t(keep) < steps.size(); ++i) {
      // DONE first: a crash mid-removal leaves a folder resume ignores, never a half one it trusts.
      fs::remove(step_dir(dir, steps[i]) + "/DONE");
      fsync_path(step_dir(dir, steps[i]));
      fs::remove_all(step_dir(dir, steps[i]));
    }
  }
  barrier(group);
}

std::string latest_checkpoint(const std::string& dir) {
  const std::vector<int64_t> steps = complete_steps(dir);
  return steps.empty() ? "" : step_dir(dir, steps.back());
}

CheckpointState load_checkpoint(const std::string& path, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer, int rank, int world_size) {
  if (!fs::exists(path + "/DONE"))
    throw CheckpointError(
        "{}: incomplete checkpoint (no DONE marker); delete it to resume from the one before",
        path);
  const CheckpointState state = read_meta(path);
  if (state.world_size != world_size)
    throw CheckpointError(
        "{}: made with world size {}, this run has {}; resume with the same number of ranks "
        "(the data order depends on it)",
        path, state.world_size, world_size);
  torch::serialize::InputArchive model_archive, optimizer_archive, rank_archive;
  model_archive.load_from(path + "/model.pt");
  model.load(model_archive);
  optimizer_archive.load_from(path + "/optimizer.pt");
  optimizer.load(optimizer_archive);
  const std::string rank_file = path + "/rank" + std::to_string(rank) + ".pt";
  if (!fs::exists(rank_file))
    throw CheckpointError("{}: missing; the checkpoint is damaged", rank_file);
  rank_archive.load_from(rank_file);
  at::Tensor rng;
  rank_archive.read("rng", rng);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  generator.set_state(rng);
  return state;
}

void save_module(torch::nn::Module& module, const std::string& path) {
  torch::serialize::OutputArchive archive;
  module.save(archive);
  write_file_atomic(path, [&](const std::string& tmp) { archive.save_to(tmp); });
}

void load_module(torch::nn::Module& module, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw CheckpointError("{}: checkpoint not found; re-run the stage that writes it", path);
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  module.load(archive);
}

}  // namespace hlm
