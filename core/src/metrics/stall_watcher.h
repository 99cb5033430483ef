// Noticing a rank that makes no progress: the launching process reads each rank's heartbeat
// (heartbeat.h) and, when a rank finished no step for stall_seconds, sets
// hlm_train_stalled{rank} to 1 and logs which rank and what it was doing; back to 0, with a
// log line, when it steps again. A rank stopped (SIGSTOP), hung in a collective, or waiting
// for such a rank all show: their phases tell the stalled rank from those waiting for it.
#pragma once
#include <set>
#include <string>
#include <vector>

namespace hlm {

class StallWatcher {
 public:
  // Where the heartbeats are read: the mapped files of ranks on this host, or the copies that
  // ranks on other nodes keep on the shared filesystem (HeartbeatWriter's copy_every_seconds).
  enum class Source { kMapped, kCopies };
  StallWatcher(std::string out_dir, int world_size, std::string stage, double stall_seconds,
               Source source = Source::kMapped);
  // Reads the heartbeats (at most twice a second; call it as often as convenient).
  void check();
  // Every rank that stalled at some point, for the job's summary.
  const std::set<int>& stalled_ranks() const { return ever_; }

 private:
  std::string out_dir_, stage_;
  double stall_seconds_, created_, next_check_ = 0;
  Source source_;
  // Per rank. Progress is timed on this process's clock, from when its step count last
  // changed, so ranks on nodes whose clocks differ are judged alike.
  struct Seen {
    int stalled = -1;  // -1 not seen yet, else 0 or 1 as last exported
    uint64_t steps = 0;
    double steps_changed_at = 0;
  };
  std::vector<Seen> seen_;
  std::set<int> ever_;
};

}  // namespace hlm
