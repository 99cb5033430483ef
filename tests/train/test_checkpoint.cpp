// Checkpoints: what save_checkpoint writes, load_checkpoint reads back; a step folder whose
// meta.json is malformed or lacks a key is a CheckpointError that names the file (not
// nlohmann's parse_error), so the user knows which folder to delete.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hlm/errors.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;

namespace {

// A fresh folder per test, removed at the end.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("hlm_checkpoint_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

struct Training {
  torch::nn::Linear model{torch::nn::LinearOptions(3, 2)};
  torch::optim::AdamW optimizer{model->parameters(), torch::optim::AdamWOptions(1e-2)};

  // One step, so the optimizer has state to save.
  void step() {
    optimizer.zero_grad();
    model->forward(torch::ones({4, 3})).sum().backward();
    optimizer.step();
  }
};

// Saves a complete checkpoint (with DONE) of `step` under dir on one rank; returns its folder.
std::string save(const fs::path& dir, Training& t, int64_t step) {
  hlm::CheckpointState state;
  state.step = step;
  state.world_size = 1;
  state.losses = {2.5, 2.0};
  state.train_seconds = 1.5;
  hlm::save_checkpoint(dir.string(), state, *t.model, t.optimizer, /*rank=*/0,
                       /*group=*/{}, /*keep=*/0);
  return hlm::latest_checkpoint(dir.string());
}

void overwrite(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// The CheckpointError load_checkpoint throws for the checkpoint at path ("" when none).
std::string load_error(const std::string& path, Training& t) {
  try {
    hlm::load_checkpoint(path, *t.model, t.optimizer, /*rank=*/0, /*world_size=*/1);
  } catch (const hlm::CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, LoadsTheStepWorldSizeAndLossesThatSaveWrote) {
  const TempDir dir("roundtrip");
  Training t;
  t.step();
  const std::string path = save(dir.path, t, 7);
  ASSERT_EQ(path, (dir.path / "step_7").string());
  Training resumed;
  const hlm::CheckpointState state =
      hlm::load_checkpoint(path, *resumed.model, resumed.optimizer, /*rank=*/0, /*world_size=*/1);
  EXPECT_EQ(state.step, 7);
  EXPECT_EQ(state.world_size, 1);
  EXPECT_EQ(state.losses, (std::vector<double>{2.5, 2.0}));
  EXPECT_DOUBLE_EQ(state.train_seconds, 1.5);
  EXPECT_TRUE(torch::equal(resumed.model->weight, t.model->weight));
}

TEST(Checkpoint, MalformedMetaJsonIsACheckpointErrorNamingTheFile) {
  const TempDir dir("malformed");
  Training t;
  const std::string path = save(dir.path, t, 3);
  ASSERT_FALSE(path.empty()) << "latest_checkpoint found no folder with DONE";
  const std::string meta = path + "/meta.json";
  overwrite(meta, "{\"step\": 3, \"world_size\": ");  // cut off mid-write

  const std::string what = load_error(path, t);
  ASSERT_FALSE(what.empty()) << "a malformed meta.json loaded without a CheckpointError";
  EXPECT_NE(what.find(meta), std::string::npos) << what;
  EXPECT_NE(what.find("delete " + path), std::string::npos) << what;
}

TEST(Checkpoint, MetaJsonWithoutAKeyIsACheckpointErrorNamingTheFile) {
  const TempDir dir("missing_key");
  Training t;
  const std::string path = save(dir.path, t, 3);
  const std::string meta = path + "/meta.json";
  overwrite(meta, "{\"step\": 3, \"losses\": []}\n");  // no world_size

  const std::string what = load_error(path, t);
  ASSERT_FALSE(what.empty()) << "a meta.json without world_size loaded without a CheckpointError";
  EXPECT_NE(what.find(meta), std::string::npos) << what;
  EXPECT_NE(what.find("world_size"), std::string::npos) << what;
}

TEST(Checkpoint, MissingMetaJsonIsACheckpointErrorNamingTheFile) {
  const TempDir dir("missing_meta");
  Training t;
  const std::string path = save(dir.path, t, 3);
  const std::string meta = path + "/meta.json";
  fs::remove(meta);

  const std::string what = load_error(path, t);
  ASSERT_FALSE(what.empty()) << "a step folder without meta.json loaded without a CheckpointError";
  EXPECT_NE(what.find(meta), std::string::npos) << what;
}

}  // namespace
