// Stop signals taken by a waiting thread (see stop_signal.h).
#include "util/stop_signal.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

namespace hlm {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_stop_ends_process{false};

// A stop signal (async-signal-safe): the flag, or the process's end where nothing checkpoints.
void on_stop_signal(int signal_number) {
  if (g_stop_ends_process) _exit(128 + signal_number);
  g_stop = true;
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

}  // namespace

void install_stop_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  // Threads that shared libraries start before main (a BLAS's workers) keep the signals
  // unblocked; the handler serves them (they run no JIT GEMM kernels), and without it their
  // default action would end the process.
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int signal_number = 0;
      if (sigwait(&set, &signal_number) == 0) on_stop_signal(signal_number);
    }
  }).detach();
}

bool stop_signal_received() { return g_stop; }

void set_stop_ends_process(bool ends) { g_stop_ends_process = ends; }

void restore_signal_mask_in_child() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace hlm
