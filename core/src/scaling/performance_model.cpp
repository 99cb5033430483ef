// The data-parallel step model (see performance_model.h).
#include "scaling/performance_model.h"

#include <algorithm>
#include <cmath>

namespace hlm {

double ring_bandwidth_seconds(double bytes, int n, const Fabric& fabric) {
  if (n <= 1 || fabric.bandwidth_bytes_per_s <= 0) return 0;
  return 2.0 * (n - 1) / n * bytes / fabric.bandwidth_bytes_per_s;
}

double ring_latency_seconds(int n, int buckets, const Fabric& fabric) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) * fabric.latency_s * std::max(1, buckets);
}

double ring_allreduce_seconds(double bytes, int n, int buckets, const Fabric& fabric) {
  return ring_bandwidth_seconds(bytes, n, fabric) + ring_latency_seconds(n, buckets, fabric);
}

Fabric fabric_from_probe(const std::string& name, int n, double small_bytes, double small_seconds,
                         double large_bytes, double large_seconds) {
  Fabric f;
  f.name = name;
  if (n <= 1) return f;
  const double factor = 2.0 * (n - 1) / n;
  const double extra = large_seconds - small_seconds;
  // A large all-reduce no slower than a small one: bandwidth beyond what was measured.
  f.bandwidth_bytes_per_s =
      extra > 0 ? factor * (large_bytes - small_bytes) / extra : factor * large_bytes / 1e-9;
  f.latency_s = std::max(
      0.0, (small_seconds - factor * small_bytes / f.bandwidth_bytes_per_s) / (2.0 * (n - 1)));
  return f;
}

int bucket_count(double gradient_bytes, double bucket_cap_mb) {
  const double cap = std::max(1.0, bucket_cap_mb * 1024 * 1024);
  return int(std::clamp(std::ceil(gradient_bytes / cap), 1.0, 1e6));
}

double lockstep_wait_seconds(const std::vector<double>& q, int n) {
  if (q.size() < 2 || n <= 1) return 0;
  const size_t bins = q.size() - 1;
  double expected_max = 0;
  for (size_t k = 0; k < bins; ++k) {
    const double mid = (q[k] + q[k + 1]) / 2;
    expected_max += mid * (std::pow(double(k + 1) / bins, n) - std::pow(double(k) / bins, n));
  }
  const double median = bins % 2 ? (q[bins / 2] + q[bins / 2 + 1]) / 2 : q[bins / 2];
  return std::max(0.0, expected_max - median);
}

namespace {

// The all-reduce that backward cannot hide: all of it beyond the hidden share, and at least
// the last bucket's, which starts only when backward ends.
double exposed_communication(const ModelInputs& in, int n, double backward_s, double overlap) {
  const double total = ring_allreduce_seconds(in.gradient_bytes, n, in.buckets, in.fabric);
  const double last = ring_allreduce_seconds(in.gradient_bytes / in.buckets, n, 1, in.fabric);
  return std::max(total - overlap * backward_s, std::min(total, last));
}

}  // namespace

Prediction predict_step(const ModelInputs& in, int n) {
  Prediction p;
  const double slowdown = n > 1 ? std::max(1.0, in.slowdown) : 1.0;
  const double slowed = in.alone.compute() * slowdown;
  const double lockstep = n > 1 ? lockstep_wait_seconds(in.alone.step_quantiles, n) * slowdown : 0;
  p.compute_seconds = slowed + lockstep;
  p.straggler_seconds = slowed - in.alone.compute() + lockstep;
  p.data_seconds = in.alone.data_wait;
  const double overlap = std::clamp(in.overlap, 0.0, 1.0);
  p.communication_seconds =
      n > 1 ? exposed_communication(in, n, in.alone.backward * slowdown, overlap) : 0;
  const double comm_total = ring_allreduce_seconds(in.gradient_bytes, n, in.buckets, in.fabric);
  p.bandwidth_share =
      comm_total > 0 ? ring_bandwidth_seconds(in.gradient_bytes, n, in.fabric) / comm_total : 0;
  p.step_seconds = p.compute_seconds + p.data_seconds + p.communication_seconds;
  const double alone = in.alone.compute() + in.alone.data_wait;
  p.efficiency = p.step_seconds > 0 ? alone / p.step_seconds : 0;

  // The bottleneck is what takes the most of the step beyond the ideal; below a tenth of the
  // step in losses the point scales, and compute is what bounds it.
  const double losses[] = {p.straggler_seconds, p.data_seconds, p.communication_seconds};
  const char* names[] = {"straggler", "data", "communication"};
  const int worst = int(std::max_element(losses, losses + 3) - losses);
  if (n <= 1 || losses[worst] < 0.1 * p.step_seconds) {
    p.bottleneck = "compute";
    p.fix = n <= 1 ? "baseline" : "none needed: it scales; more ranks or a larger model";
    return p;
  }
  p.bottleneck = names[worst];
  if (p.bottleneck == "straggler")
    p.fix = "fewer ranks or threads per host: ranks share cores and memory bandwidth";
  else if (p.bottleneck == "data")
    p.fix = "faster batch assembly (token store on local disk, more prefetch)";
  else if (p.bandwidth_share < 0.5)
    p.fix = "larger buckets (bucket_cap_mb) or accumulation: fewer messages per sample";
  else if (overlap < 0.5)
    p.fix =
        "accumulation or a larger batch (more compute per all-reduce); smaller buckets "
        "to start communication earlier in backward";
  else
    p.fix =
        "accumulation or a larger batch (more compute per all-reduce), or a faster "
        "fabric/backend";
  return p;
}

double overlap_from_measurement(const ModelInputs& in, int n, double exposed_allreduce_s) {
  const double slowdown = std::max(1.0, in.slowdown);
  const double backward = in.alone.backward * slowdown;
  if (n <= 1 || backward <= 0) return 0;
  const double total = ring_allreduce_seconds(in.gradient_bytes, n, in.buckets, in.fabric);
  return std::clamp((total - exposed_allreduce_s) / backward, 0.0, 1.0);
}

}  // namespace hlm
