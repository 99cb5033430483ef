// The data-parallel step model: ring all-reduce arithmetic by hand, a fabric recovered from
// timings it generated, the lockstep wait against its closed form, and the bottleneck named.
#include <gtest/gtest.h>

#include "scaling/performance_model.h"

namespace {

const hlm::Fabric kTenGbit{"test", 10e9 / 8, 5e-6};  // 1.25 GB/s, 5 us

TEST(PerformanceModel, RingAllReduceByHand) {
  // 4 ranks, 100 MB in 4 buckets: 2 * 3/4 * 1e8 / 1.25e9 = 0.12 s; 2 * 3 * 5 us * 4 = 120 us.
  EXPECT_NEAR(hlm::ring_bandwidth_seconds(1e8, 4, kTenGbit), 0.12, 1e-12);
  EXPECT_NEAR(hlm::ring_latency_seconds(4, 4, kTenGbit), 120e-6, 1e-12);
  EXPECT_NEAR(hlm::ring_allreduce_seconds(1e8, 4, 4, kTenGbit), 0.12012, 1e-12);
  EXPECT_EQ(hlm::ring_allreduce_seconds(1e8, 1, 4, kTenGbit), 0);  // one rank sends nothing
}

TEST(PerformanceModel, FabricFromProbeRecoversBandwidthAndLatency) {
  for (int n : {2, 3, 8}) {
    const double small = hlm::ring_allreduce_seconds(4, n, 1, kTenGbit);
    const double large = hlm::ring_allreduce_seconds(4 << 20, n, 1, kTenGbit);
    const auto f = hlm::fabric_from_probe("gloo", n, 4, small, 4 << 20, large);
    EXPECT_NEAR(f.bandwidth_bytes_per_s, kTenGbit.bandwidth_bytes_per_s, 1e-3) << n;
    EXPECT_NEAR(f.latency_s, kTenGbit.latency_s, 1e-12) << n;
    EXPECT_EQ(f.name, "gloo");
  }
}

TEST(PerformanceModel, BucketsAreTheGradientOverTheCap) {
  EXPECT_EQ(hlm::bucket_count(13.3e6, 4), 4);  // 13.3 MB in 4 MiB buckets
  EXPECT_EQ(hlm::bucket_count(1e3, 25), 1);
}

TEST(PerformanceModel, LockstepWaitMatchesTheUniformClosedForm) {
  // Steps uniform on [1, 2] s: E[max of n] = 1 + n / (n + 1), the median 1.5.
  std::vector<double> q;
  for (int k = 0; k <= 200; ++k) q.push_back(1 + k / 200.0);
  EXPECT_NEAR(hlm::lockstep_wait_seconds(q, 2), 1 + 2.0 / 3 - 1.5, 1e-4);
  EXPECT_NEAR(hlm::lockstep_wait_seconds(q, 4), 1 + 4.0 / 5 - 1.5, 1e-4);
  EXPECT_EQ(hlm::lockstep_wait_seconds(q, 1), 0);
  EXPECT_EQ(hlm::lockstep_wait_seconds(std::vector<double>(21, 0.3), 8), 0);  // no spread
}

hlm::ModelInputs inputs() {
  hlm::ModelInputs in;
  in.alone = {0.1, 0.2, 0.01, 0.0, {}};  // 310 ms of compute a step
  in.gradient_bytes = 13.3e6;
  in.buckets = 4;
  in.fabric = kTenGbit;
  return in;
}

TEST(PerformanceModel, ASlowLinkMakesCommunicationTheBottleneck) {
  auto in = inputs();
  in.fabric.bandwidth_bytes_per_s = 0.1e9 / 8;  // 0.1 Gbit/s: 2 * 1/2 * 13.3 MB / 12.5 MB/s
  const auto p = hlm::predict_step(in, 2);
  EXPECT_NEAR(p.communication_seconds, 13.3e6 / 12.5e6 + 2 * 5e-6 * 4, 1e-9);  // no overlap
  EXPECT_EQ(p.bottleneck, "communication");
  EXPECT_NEAR(p.efficiency, 0.31 / (0.31 + p.communication_seconds), 1e-12);
  EXPECT_NE(p.fix.find("accumulation"), std::string::npos) << p.fix;
}

TEST(PerformanceModel, BackwardHidesCommunicationUpToTheLastBucket) {
  auto in = inputs();
  in.overlap = 1.0;  // all of backward (200 ms) hides the 10.6 ms all-reduce but the last bucket
  const auto p = hlm::predict_step(in, 2);
  EXPECT_NEAR(p.communication_seconds, hlm::ring_allreduce_seconds(13.3e6 / 4, 2, 1, kTenGbit),
              1e-12);
  EXPECT_EQ(p.bottleneck, "compute");
}

TEST(PerformanceModel, SharingTheHostIsAStraggler) {
  auto in = inputs();
  in.slowdown = 1.25;
  const auto p = hlm::predict_step(in, 2);
  EXPECT_NEAR(p.straggler_seconds, 0.31 * 0.25, 1e-12);
  EXPECT_EQ(p.bottleneck, "straggler");
  EXPECT_NE(p.fix.find("fewer ranks"), std::string::npos) << p.fix;
}

TEST(PerformanceModel, TheOverlapFittedToAMeasurementReproducesIt) {
  auto in = inputs();
  in.fabric.bandwidth_bytes_per_s = 1e9 / 8;
  const double total = hlm::ring_allreduce_seconds(in.gradient_bytes, 2, in.buckets, in.fabric);
  const double exposed = total * 0.4;
  in.overlap = hlm::overlap_from_measurement(in, 2, exposed);
  EXPECT_NEAR(in.overlap, total * 0.6 / 0.2, 1e-12);
  EXPECT_NEAR(hlm::predict_step(in, 2).communication_seconds, exposed, 1e-12);
}

}  // namespace
