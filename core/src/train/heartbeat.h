// What a rank is doing, for the process that launched it: a few numbers in a small file of
// the job's folder (heartbeat.rank<r>), shared through mmap, updated as the rank enters each
// phase of a step and finishes a step. The launching process reads them to notice a rank that
// made no step for a while (stall_watcher.h): a stopped or hung rank cannot report itself.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace hlm {

struct HeartbeatShared;

enum class RankActivity : int32_t {
  kStarting = 0,  // before the first step (loading, rendezvous, broadcast)
  kData,          // waiting for a batch
  kForward,
  kBackward,   // with the all-reduces its gradient hooks start (shm reduces on this thread)
  kAllreduce,  // waiting for the last buckets
  kOptimizer,
  kBetweenSteps,  // logging, checkpointing, evaluating
};
const char* activity_name(RankActivity activity);

struct HeartbeatState {
  uint64_t steps = 0;                 // steps finished
  double last_step_unix_seconds = 0;  // when the last one finished (0: none yet)
  double started_unix_seconds = 0;    // when the writer was created
  RankActivity activity = RankActivity::kStarting;
};

class HeartbeatWriter {
 public:
  // Creates (or truncates) `path`. Without it (no space, no folder) the writer does nothing:
  // a missing heartbeat must not stop training.
  explicit HeartbeatWriter(const std::string& path);
  ~HeartbeatWriter();
  HeartbeatWriter(const HeartbeatWriter&) = delete;
  HeartbeatWriter& operator=(const HeartbeatWriter&) = delete;

  void enter(RankActivity activity);
  void step_finished(uint64_t steps);

 private:
  HeartbeatShared* shared_ = nullptr;
};

// The state in `path`, or nothing when there is no heartbeat file (yet).
std::optional<HeartbeatState> read_heartbeat(const std::string& path);

}  // namespace hlm
