// The lock a process holds on a run directory while it works in it: `hlm run` (new or
// --resume) takes it before writing anything, and the rank processes it starts inherit it, so
// the run stays locked until the last of them has exited, even when `hlm run` itself was
// killed. A second `hlm run --resume` of a locked run is refused naming the PID, and
// `hlm status` tells a live run from a dead one by it.
//
// The lock is flock(2) on RUN_DIR/run.lock, which holds the PID and host of the process that
// took it. The kernel drops it when every process holding it has ended: no stale lock is left
// by a crash.
#pragma once
#include <string>

namespace hlm {

struct RunLockHolder {
  bool locked = false;  // some process holds the lock now
  long pid = 0;         // the PID and host written by the process that took it (0, "": unknown)
  std::string host;
  bool on_this_host = false;  // the holder's host is this one
  bool pid_alive = false;     // that PID runs on this host (false: it ended, ranks may remain)
};

// Takes the lock on run_dir for the rest of this process's life, or throws hlm::ConfigError
// naming the holder and what to do. Waits up to wait_seconds for a held lock first (a job
// requeued after its node failed waits out the file server's hold on the dead node's lock).
// Idempotent for the same run_dir.
void lock_run_directory(const std::string& run_dir, double wait_seconds = 0);

// Who holds the lock of run_dir now (without taking it).
RunLockHolder run_lock_holder(const std::string& run_dir);

// The descriptor of the lock this process holds, -1 when none: a launcher keeps it open in the
// processes it starts (see runners/multiproc/launcher.cpp).
int held_run_lock_fd();

}  // namespace hlm
