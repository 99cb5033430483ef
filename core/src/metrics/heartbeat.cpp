// The heartbeat file (see heartbeat.h): one small struct of lock-free atomics, written by
// the rank through a shared mapping and read by the launching process with plain reads.
#include "metrics/heartbeat.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hlm/util.h"
#include "util/atomic_file.h"

namespace hlm {

struct HeartbeatShared {
  std::atomic<uint64_t> steps;
  std::atomic<double> last_step_unix_seconds;
  std::atomic<double> started_unix_seconds;
  std::atomic<int32_t> activity;
};
static_assert(std::atomic<double>::is_always_lock_free, "the reader maps the same bytes");

const char* activity_name(RankActivity activity) {
  switch (activity) {
    case RankActivity::kStarting:
      return "starting";
    case RankActivity::kData:
      return "waiting for data";
    case RankActivity::kForward:
      return "forward";
    case RankActivity::kBackward:
      return "backward (and the all-reduces it starts)";
    case RankActivity::kAllreduce:
      return "all-reduce";
    case RankActivity::kOptimizer:
      return "optimizer";
    case RankActivity::kBetweenSteps:
      return "between steps (logging, checkpoint, evaluation)";
  }
  return "unknown";
}

HeartbeatWriter::HeartbeatWriter(const std::string& path, double copy_every_seconds) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (::ftruncate(fd, sizeof(HeartbeatShared)) == 0) {
    void* at = ::mmap(nullptr, sizeof(HeartbeatShared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at != MAP_FAILED) {
      shared_ = new (at) HeartbeatShared{};
      shared_->started_unix_seconds.store(unix_seconds());
    }
  }
  ::close(fd);
  if (shared_ != nullptr && copy_every_seconds > 0)
    copier_ = std::thread(&HeartbeatWriter::copy_until_stopped, this, heartbeat_copy_path(path),
                          copy_every_seconds);
}

HeartbeatWriter::~HeartbeatWriter() {
  if (copier_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(copy_mutex_);
      copy_stop_ = true;
    }
    copy_wake_.notify_all();
    copier_.join();
  }
  if (shared_ != nullptr) ::munmap(shared_, sizeof(HeartbeatShared));
}

void HeartbeatWriter::copy_until_stopped(const std::string& copy_path, double every_seconds) {
  nlohmann::json last;
  std::unique_lock<std::mutex> lock(copy_mutex_);
  do {
    const nlohmann::json now = {{"steps", shared_->steps.load(std::memory_order_acquire)},
                                {"activity", shared_->activity.load()},
                                {"last_step_unix_seconds", shared_->last_step_unix_seconds.load()},
                                {"started_unix_seconds", shared_->started_unix_seconds.load()}};
    // Only a change is written: a network filesystem's metadata server sees one rename per
    // interval per progressing rank at most.
    if (now["steps"] != last["steps"] || now["activity"] != last["activity"]) {
      try {
        write_file_atomic(copy_path, now.dump() + "\n");
        last = now;
      } catch (const std::exception&) {
        // A full or unreachable filesystem must not stop training; the next change retries.
      }
    }
  } while (!copy_wake_.wait_for(lock, std::chrono::duration<double>(every_seconds),
                                [&] { return copy_stop_; }));
}

std::string heartbeat_copy_path(const std::string& path) { return path + ".json"; }

void HeartbeatWriter::enter(RankActivity activity) {
  if (shared_ != nullptr) shared_->activity.store(int32_t(activity), std::memory_order_relaxed);
}

void HeartbeatWriter::step_finished(uint64_t steps) {
  if (shared_ == nullptr) return;
  shared_->last_step_unix_seconds.store(unix_seconds(), std::memory_order_relaxed);
  shared_->steps.store(steps, std::memory_order_release);
  shared_->activity.store(int32_t(RankActivity::kBetweenSteps), std::memory_order_relaxed);
}

std::optional<HeartbeatState> read_heartbeat(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // A file the writer has not sized yet would map, then fault (SIGBUS) when read.
  struct stat info {};
  if (::fstat(fd, &info) != 0 || size_t(info.st_size) < sizeof(HeartbeatShared)) {
    ::close(fd);
    return std::nullopt;
  }
  void* at = ::mmap(nullptr, sizeof(HeartbeatShared), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (at == MAP_FAILED) return std::nullopt;
  const auto* shared = static_cast<const HeartbeatShared*>(at);
  HeartbeatState state;
  state.steps = shared->steps.load(std::memory_order_acquire);
  state.last_step_unix_seconds = shared->last_step_unix_seconds.load();
  state.started_unix_seconds = shared->started_unix_seconds.load();
  state.activity = RankActivity(shared->activity.load());
  ::munmap(at, sizeof(HeartbeatShared));
  return state;
}

std::optional<HeartbeatState> read_heartbeat_copy(const std::string& path) {
  std::ifstream in(heartbeat_copy_path(path));
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("steps")) return std::nullopt;
  HeartbeatState state;
  state.steps = j.value("steps", uint64_t(0));
  state.last_step_unix_seconds = j.value("last_step_unix_seconds", 0.0);
  state.started_unix_seconds = j.value("started_unix_seconds", 0.0);
  state.activity = RankActivity(j.value("activity", 0));
  return state;
}

}  // namespace hlm
