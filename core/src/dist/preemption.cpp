// Stop-signal flag and its agreement across ranks (see preemption.h).
#include "dist/preemption.h"

#include <torch/torch.h>

#include <csignal>

namespace hlm {
namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }
}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

bool stop_signal_received() { return g_stop != 0; }

bool stop_requested(const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  if (!group) return g_stop != 0;
  // Ranks get the signal at slightly different times: all stop at the same step or none.
  std::vector<at::Tensor> flag{torch::full({1}, int(g_stop), torch::kInt)};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  group->allreduce(flag, options)->wait();
  return flag[0].item<int>() != 0;
}

}  // namespace hlm
