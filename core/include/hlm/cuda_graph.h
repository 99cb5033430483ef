// Whether this thread's forward passes are captured into a CUDA graph, or are the eager passes
// that warm up for one (the trainer's cuda_graph option). A model's forward must then not read
// a device value on the host (.item(), a tensor's truth value), which capture forbids, and must
// take the same path while warming up as while capturing: the one correct for any input.
#pragma once

namespace hlm {

bool graph_safe_forward();

// graph_safe_forward() is true on this thread while one lives.
class GraphSafeForward {
 public:
  GraphSafeForward();
  ~GraphSafeForward();
  GraphSafeForward(const GraphSafeForward&) = delete;
  GraphSafeForward& operator=(const GraphSafeForward&) = delete;

 private:
  bool was_;
};

}  // namespace hlm
