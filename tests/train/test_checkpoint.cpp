// Checkpoints: what save_checkpoint writes, load_checkpoint reads back; a file changed after it
// was written (a flipped byte, a truncation) fails its checksum, and a step folder whose
// meta.json is malformed or lacks a key is a CheckpointError that names the file (not
// nlohmann's parse_error), so the user knows which folder to delete; a step folder left by a
// crash mid-write (no DONE, a .tmp) is never the one resumed from.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hlm/errors.h"
#include "support/hlm_cli.h"
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

// A DONE marker without checksums, as written before checkpoints carried them: the meta.json
// checks below are then reached without a checksum mismatch coming first.
void mark_done_without_checksums(const std::string& path) { overwrite(path + "/DONE", "done\n"); }

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
  mark_done_without_checksums(path);

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

TEST(Checkpoint, AFlippedByteInAnyFileFailsItsChecksumAndIsNamed) {
  const TempDir dir("flipped");
  Training t;
  t.step();
  const std::string path = save(dir.path, t, 3);
  for (const std::string name : {"model.pt", "optimizer.pt", "rank0.pt", "meta.json"}) {
    SCOPED_TRACE(name);
    const std::string file = path + "/" + name;
    const std::string original = hlm::test::read_text(file);
    ASSERT_GT(original.size(), 8u);
    std::string flipped = original;
    flipped[flipped.size() / 2] ^= 0x01;
    overwrite(file, flipped);
    const std::string what = load_error(path, t);
    EXPECT_NE(what.find(file + ": checksum mismatch"), std::string::npos) << what;
    EXPECT_NE(what.find("delete " + path), std::string::npos) << what;
    overwrite(file, original);
  }
  EXPECT_EQ(load_error(path, t), "") << "the restored files no longer load";
}

TEST(Checkpoint, ATruncatedFileFailsItsChecksumAndIsNamed) {
  const TempDir dir("truncated");
  Training t;
  t.step();
  const std::string path = save(dir.path, t, 3);
  const std::string file = path + "/model.pt";
  fs::resize_file(file, fs::file_size(file) / 2);
  const std::string what = load_error(path, t);
  EXPECT_NE(what.find(file + ": checksum mismatch"), std::string::npos) << what;
}

// A DONE marker whose checksums are not text (edited by hand, or damaged) is a CheckpointError
// naming DONE, not a JSON type error escaping to the runner.
TEST(Checkpoint, ADoneMarkerWithAChecksumThatIsNotTextIsACheckpointErrorNamingIt) {
  const TempDir dir("done_not_text");
  Training t;
  const std::string path = save(dir.path, t, 3);
  for (const std::string marker : {R"({"fnv1a64": {"meta.json": 1}})", R"({"fnv1a64": [1]})"}) {
    SCOPED_TRACE(marker);
    overwrite(path + "/DONE", marker);
    const std::string what = load_error(path, t);
    EXPECT_NE(what.find(path + "/DONE"), std::string::npos) << what;
    EXPECT_NE(what.find("delete " + path), std::string::npos) << what;
  }
}

// What a process killed between writing a file's temp copy and renaming it leaves: a step
// folder with a .tmp and no DONE. The newest complete checkpoint is the one before.
TEST(Checkpoint, AStepFolderLeftByACrashMidWriteIsNeverTheOneResumedFrom) {
  const TempDir dir("crash_mid_write");
  Training t;
  t.step();
  const std::string good = save(dir.path, t, 3);
  const fs::path torn = dir.path / "step_4";
  fs::create_directories(torn);
  fs::copy_file(good + "/meta.json", torn / "meta.json");
  overwrite((torn / "model.pt.tmp").string(),
            hlm::test::read_text(good + "/model.pt").substr(0, 100));
  EXPECT_EQ(hlm::latest_checkpoint(dir.path.string()), good);
  const std::string what = load_error(torn.string(), t);
  EXPECT_NE(what.find("incomplete checkpoint"), std::string::npos) << what;
}

// Disk full while a checkpoint is written (RLIMIT_FSIZE: a write past the limit fails with
// EFBIG, as one on a full disk fails with ENOSPC): a clear error naming the file, the previous
// checkpoint still the newest and loadable, and a save after space is freed succeeds.
TEST(Checkpoint, ADiskFullWhileWritingKeepsThePreviousCheckpointAndASaveLaterSucceeds) {
  const TempDir dir("disk_full");
  Training t;
  t.step();
  const std::string good = save(dir.path, t, 3);
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  std::signal(SIGXFSZ, SIG_IGN);  // the write fails instead of killing the process
  rlimit tight = before;
  tight.rlim_cur = 64;  // bytes: smaller than any archive
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  std::string what;
  try {
    save(dir.path, t, 4);
  } catch (const hlm::Error& e) {
    what = e.what();
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  ASSERT_FALSE(what.empty()) << "a checkpoint written past the file-size limit raised no error";
  EXPECT_NE(what.find((dir.path / "step_4").string()), std::string::npos) << what;
  EXPECT_NE(what.find("cannot write"), std::string::npos) << what;
  EXPECT_EQ(hlm::latest_checkpoint(dir.path.string()), good);
  EXPECT_EQ(load_error(good, t), "");
  EXPECT_EQ(save(dir.path, t, 4), (dir.path / "step_4").string());
  EXPECT_EQ(load_error((dir.path / "step_4").string(), t), "");
}

}  // namespace
