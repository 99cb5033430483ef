// What a rank is doing, for the process that launched it: a few numbers in a small file of
// the job's folder (heartbeat.rank<r>), shared through mmap, updated as the rank enters each
// phase of a step and finishes a step. The launching process reads them to notice a rank that
// made no step for a while (stall_watcher.h): a stopped or hung rank cannot report itself.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

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
  // With copy_every_seconds > 0 a thread also copies the state, when it changed, to
  // heartbeat_copy_path(path) at that interval, written whole and renamed into place: ranks
  // on other nodes share only a network filesystem with the launching process, and another
  // node's writes through a mapping reach it late. A stopped rank's copy stops with it.
  explicit HeartbeatWriter(const std::string& path, double copy_every_seconds = 0);
  ~HeartbeatWriter();
  HeartbeatWriter(const HeartbeatWriter&) = delete;
  HeartbeatWriter& operator=(const HeartbeatWriter&) = delete;

  void enter(RankActivity activity);
  void step_finished(uint64_t steps);

 private:
  void copy_until_stopped(const std::string& copy_path, double every_seconds);

  HeartbeatShared* shared_ = nullptr;
  std::mutex copy_mutex_;
  std::condition_variable copy_wake_;
  bool copy_stop_ = false;
  std::thread copier_;
};

// <path>.json: the copy a writer with copy_every_seconds > 0 keeps.
std::string heartbeat_copy_path(const std::string& path);

// The state in `path`, or nothing when there is no heartbeat file (yet).
std::optional<HeartbeatState> read_heartbeat(const std::string& path);
// The state in heartbeat_copy_path(path), or nothing when there is no (readable) copy.
std::optional<HeartbeatState> read_heartbeat_copy(const std::string& path);

}  // namespace hlm
