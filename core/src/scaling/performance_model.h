// Why data-parallel training falls short of N times one rank, and by how much at N ranks:
// a step is the rank's compute (forward, backward, optimizer; slowed when ranks share a
// host), its wait for data, and the part of the gradient all-reduce that backward does not
// hide. The all-reduce is a ring: 2(N-1)/N x gradient bytes / bandwidth, plus 2(N-1) message
// latencies per bucket.
#pragma once
#include <string>
#include <vector>

namespace hlm {

// A link class: the bus bandwidth a ring all-reduce sees per rank, and one message's latency.
struct Fabric {
  std::string name;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

// Ring all-reduce of `bytes` over n ranks, sent as `buckets` separate all-reduces.
double ring_allreduce_seconds(double bytes, int n, int buckets, const Fabric& fabric);
// The two terms of that sum.
double ring_bandwidth_seconds(double bytes, int n, const Fabric& fabric);
double ring_latency_seconds(int n, int buckets, const Fabric& fabric);

// The latency and bandwidth that explain two measured all-reduces of different sizes on n
// ranks (distributed/fabric_probe.h): the small one is nearly all latency, the difference all
// bandwidth.
Fabric fabric_from_probe(const std::string& name, int n, double small_bytes, double small_seconds,
                         double large_bytes, double large_seconds);

// Gradient buckets of `bucket_cap_mb` each when only the byte count is known (GradientSync
// never splits a tensor, so it may make fewer; runs record its count as gradient_buckets).
int bucket_count(double gradient_bytes, double bucket_cap_mb);

// Seconds per optimizer step on one rank, by phase.
struct StepPhases {
  double forward = 0, backward = 0, optimizer = 0, data_wait = 0;
  // Optional: evenly spaced quantiles (minimum to maximum) of the step time without all-reduce.
  // Ranks in lockstep each wait for the slowest; how long, the spread of the steps says.
  std::vector<double> step_quantiles;
  double compute() const { return forward + backward + optimizer; }
};

// Expected maximum of n independent draws from the distribution the quantiles describe, less
// its median: what lockstep costs n ranks per step (0 without quantiles).
double lockstep_wait_seconds(const std::vector<double>& quantiles, int n);

struct ModelInputs {
  StepPhases alone;     // the same configuration on one rank, alone on its host
  double slowdown = 1;  // compute time with N ranks on the host / alone (>= 1)
  double gradient_bytes = 0;
  int buckets = 1;
  Fabric fabric;
  double overlap = 0;  // fraction of backward that hides communication, 0..1
};

struct Prediction {
  double step_seconds = 0;       // one optimizer step at N ranks
  double efficiency = 0;         // alone step / N-rank step (same per-rank work)
  double compute_seconds = 0;    // compute, slowed, with the wait for the slowest rank
  double straggler_seconds = 0;  // the slowdown from sharing the host and lockstep waits
  double data_seconds = 0;
  double communication_seconds = 0;  // all-reduce not hidden by backward
  double bandwidth_share = 0;        // of the all-reduce time: the bandwidth term's part
  std::string bottleneck;            // compute, data, communication or straggler
  std::string fix;                   // the change that would help most
};

Prediction predict_step(const ModelInputs& inputs, int n);

// The overlap that makes the model match a measured exposed all-reduce time at n ranks.
double overlap_from_measurement(const ModelInputs& inputs, int n, double exposed_allreduce_s);

}  // namespace hlm
