// Kahn's algorithm with a sorted ready set (so independent stages keep file order); what is
// left over holds a cycle, which is walked to name it.
#include "workflow/dag.h"

#include <algorithm>
#include <set>

namespace hlm::workflow::detail {

namespace {

const DagEdge* edge_to(const DagStage& from, size_t target) {
  for (const auto& edge : from.needs)
    if (edge.target == target) return &edge;
  return nullptr;
}

[[noreturn]] void report_cycle(const std::vector<DagStage>& stages, const std::vector<bool>& done) {
  // Every stage left over needs another one left over, so following needs must loop.
  size_t start = 0;
  while (done[start]) ++start;
  std::vector<size_t> path;
  size_t current = start;
  while (std::find(path.begin(), path.end(), current) == path.end()) {
    path.push_back(current);
    for (const auto& edge : stages[current].needs) {
      if (!done[edge.target]) {
        current = edge.target;
        break;
      }
    }
  }
  std::vector<size_t> cycle(std::find(path.begin(), path.end(), current), path.end());
  // Start the name at the stage written first, so the message does not depend on the walk.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string names;
  for (size_t index : cycle) names += stages[index].id + " -> ";
  names += stages[cycle.front()].id;
  const size_t next = cycle.size() > 1 ? cycle[1] : cycle[0];
  fail(edge_to(stages[cycle.front()], next)->loc,
       "cycle in needs: " + names + " (a stage cannot depend on itself, directly or not)");
}

}  // namespace

std::vector<size_t> topological_order(const std::vector<DagStage>& stages) {
  const size_t n = stages.size();
  std::vector<size_t> missing(n, 0);
  std::vector<std::vector<size_t>> dependents(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> targets;
    for (const auto& edge : stages[i].needs) targets.insert(edge.target);
    missing[i] = targets.size();
    for (size_t t : targets) dependents[t].push_back(i);
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    done[i] = true;
    for (size_t d : dependents[i])
      if (--missing[d] == 0) ready.insert(d);
  }
  if (order.size() < n) report_cycle(stages, done);
  return order;
}

}  // namespace hlm::workflow::detail
