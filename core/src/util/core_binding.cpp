// Pinning a rank's threads to its own cores (see core_binding.h).
#include "util/core_binding.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace hlm {

namespace {

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

// Position of `cpu` among its core's hyperthread siblings (0 for the first); 0 when unknown.
int sibling_index(int cpu) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                   "/topology/thread_siblings_list");
  std::string list;
  if (!(in >> list)) return 0;
  // "0,4" or "0-1": the siblings in increasing order.
  std::vector<int> siblings;
  std::stringstream parts(list);
  for (std::string part; std::getline(parts, part, ',');) {
    const auto dash = part.find('-');
    const int first = std::stoi(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int s = first; s <= last; ++s) siblings.push_back(s);
  }
  const auto at = std::find(siblings.begin(), siblings.end(), cpu);
  return at == siblings.end() ? 0 : int(at - siblings.begin());
}

}  // namespace

CoreBinding plan_core_binding(const std::vector<int>& allowed, int local_rank, int local_ranks,
                              int threads) {
  CoreBinding plan;
  threads = std::max(1, threads);
  if (local_ranks <= 1) {
    plan.reason = "not bound: the only rank on this host";
    return plan;
  }
  const size_t needed = size_t(local_ranks) * size_t(threads);
  if (allowed.size() < needed) {
    plan.reason = std::to_string(local_ranks) + " ranks x " + std::to_string(threads) +
                  " threads need " + std::to_string(needed) + " CPUs, this process may use " +
                  std::to_string(allowed.size()) + ": not bound";
    return plan;
  }
  const auto first = allowed.begin() + ptrdiff_t(size_t(local_rank) * size_t(threads));
  plan.cpus.assign(first, first + threads);
  plan.reason = "bound to CPU " + cpu_list_text(plan.cpus);
  return plan;
}

std::vector<int> allowed_cpus_spread() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return {};
  std::vector<std::pair<int, int>> by_sibling;  // (sibling index, cpu)
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) by_sibling.emplace_back(sibling_index(cpu), cpu);
  std::stable_sort(by_sibling.begin(), by_sibling.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> cpus;
  for (const auto& [sibling, cpu] : by_sibling) cpus.push_back(cpu);
  return cpus;
}

CoreBinding bind_rank_to_cores(int local_rank, int local_ranks, int threads) {
  CoreBinding plan = plan_core_binding(allowed_cpus_spread(), local_rank, local_ranks, threads);
  if (plan.cpus.empty()) return plan;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : plan.cpus) CPU_SET(cpu, &mask);
  // sched_setaffinity moves one thread: every thread already running (the signal waiter,
  // the metrics server, a BLAS pool started before main) is moved one by one.
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const pid_t tid = pid_t(std::stol(task.path().filename().string()));
    if (sched_setaffinity(tid, sizeof(mask), &mask) != 0 && tid == pid_t(syscall(SYS_gettid))) {
      plan.reason = "not bound: sched_setaffinity refused CPU " + cpu_list_text(plan.cpus) + " (" +
                    std::strerror(errno) + ")";
      plan.cpus.clear();
      return plan;
    }
  }
  return plan;
}

}  // namespace hlm
