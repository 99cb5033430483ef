// Reading rank heartbeats for stalls (see stall_watcher.h).
#include "metrics/stall_watcher.h"

#include <spdlog/spdlog.h>

#include "hlm/util.h"
#include "metrics/heartbeat.h"
#include "metrics/metrics.h"

namespace hlm {
StallWatcher::StallWatcher(std::string out_dir, int world_size, std::string stage,
                           double stall_seconds, Source source)
    : out_dir_(std::move(out_dir)),
      stage_(std::move(stage)),
      stall_seconds_(stall_seconds),
      created_(unix_seconds()),
      source_(source),
      seen_(size_t(world_size)) {}

void StallWatcher::check() {
  const double now = unix_seconds();
  if (stall_seconds_ <= 0 || now < next_check_) return;
  next_check_ = now + 0.5;
  for (size_t r = 0; r < seen_.size(); ++r) {
    const std::string path = out_dir_ + "/heartbeat.rank" + std::to_string(r);
    const auto beat = source_ == Source::kMapped ? read_heartbeat(path) : read_heartbeat_copy(path);
    // A mapped file left by an earlier start of the ranks is not this start's rank (copies
    // are removed before a start: their clock may not be this host's).
    if (!beat || (source_ == Source::kMapped && beat->started_unix_seconds < created_ - 1))
      continue;
    Seen& rank = seen_[r];
    // Timed from when it was first seen: a rank whose start waits (srun queueing for the step,
    // a container starting) has not stalled.
    if (rank.stalled < 0 || beat->steps != rank.steps) {
      rank.steps_changed_at = now;
      rank.steps = beat->steps;
    }
    const double since = now - rank.steps_changed_at;
    const bool stalled = since > stall_seconds_;
    const int before = rank.stalled;
    if (int(stalled) == before) continue;
    rank.stalled = int(stalled);
    // A rank's 0 is exported once it is seen, so a dashboard shows every rank, stalled or not.
    metrics().train_stalled(stage_, int(r), stalled);
    if (stalled) {
      ever_.insert(int(r));
      spdlog::warn(
          "{}: rank {} made no step for {:.0f} s (stall_seconds {:g}); steps done {}, "
          "now in: {}",
          stage_, r, since, stall_seconds_, beat->steps, activity_name(beat->activity));
    } else if (before == 1) {
      spdlog::info("{}: rank {} steps again (step {})", stage_, r, beat->steps);
    }
  }
}

}  // namespace hlm
