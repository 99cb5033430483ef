// Reading rank heartbeats for stalls (see stall_watcher.h).
#include "train/stall_watcher.h"

#include <spdlog/spdlog.h>

#include "hlm/util.h"
#include "metrics/metrics.h"
#include "train/heartbeat.h"

namespace hlm {
StallWatcher::StallWatcher(std::string out_dir, int world_size, std::string stage,
                           double stall_seconds)
    : out_dir_(std::move(out_dir)),
      stage_(std::move(stage)),
      stall_seconds_(stall_seconds),
      created_(unix_seconds()),
      stalled_now_(size_t(world_size), -1) {}

void StallWatcher::check() {
  const double now = unix_seconds();
  if (stall_seconds_ <= 0 || now < next_check_) return;
  next_check_ = now + 0.5;
  for (size_t r = 0; r < stalled_now_.size(); ++r) {
    const auto beat = read_heartbeat(out_dir_ + "/heartbeat.rank" + std::to_string(r));
    // A file left by an earlier start of the ranks is not this start's rank.
    if (!beat || beat->started_unix_seconds < created_ - 1) continue;
    const double since = beat->last_step_unix_seconds > 0 ? beat->last_step_unix_seconds
                                                          : beat->started_unix_seconds;
    const bool stalled = now - since > stall_seconds_;
    const int before = stalled_now_[r];
    if (int(stalled) == before) continue;
    stalled_now_[r] = int(stalled);
    // A rank's 0 is exported once it is seen, so a dashboard shows every rank, stalled or not.
    metrics().train_stalled(stage_, int(r), stalled);
    if (stalled) {
      ever_.insert(int(r));
      spdlog::warn(
          "{}: rank {} made no step for {:.0f} s (stall_seconds {:g}); steps done {}, "
          "now in: {}",
          stage_, r, now - since, stall_seconds_, beat->steps, activity_name(beat->activity));
    } else if (before == 1) {
      spdlog::info("{}: rank {} steps again (step {})", stage_, r, beat->steps);
    }
  }
}

}  // namespace hlm
