// The series read at scrape time (CPU time, checkpoint age, energy), stage status, samples, and
// the RAPL reader on a powercap tree laid out as the kernel lays it out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "hlm/errors.h"
#include "metrics/energy.h"
#include "metrics/metrics.h"
#include "support/hlm_cli.h"
#include "support/http_get.h"

namespace fs = std::filesystem;

namespace {

// The value of the first sample line of `series` (name and labels as printed), or -1.
double sample(const std::string& body, const std::string& series) {
  const size_t at = body.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + series.size() + 2));
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text << "\n"; }

void make_package(const fs::path& root, const std::string& dir, const std::string& name,
                  uint64_t energy_uj, uint64_t range_uj) {
  fs::create_directories(root / dir);
  write(root / dir / "name", name);
  write(root / dir / "energy_uj", std::to_string(energy_uj));
  write(root / dir / "max_energy_range_uj", std::to_string(range_uj));
}

hlm::TrainStep step_of(int64_t n) {
  hlm::TrainStep s;
  s.step = n;
  s.rank_tokens = 256;
  s.rank_samples = 8;
  s.step_seconds = 0.01;
  return s;
}

}  // namespace

TEST(ProcessMetrics, CpuSecondsGrowWithWorkAndAreACounter) {
  hlm::Metrics m;
  m.set_labels("run-p", 0);
  const int port = m.start_exposer(0);
  const std::string before = hlm::test::http_get(port, "/metrics");
  EXPECT_NE(before.find("# TYPE hlm_process_cpu_seconds_total counter"), std::string::npos);
  const double first = sample(before, "hlm_process_cpu_seconds_total{rank=\"0\",run=\"run-p\"}");
  ASSERT_GE(first, 0) << before;
  // 0.2 s of this thread's CPU time, however busy the machine is.
  const auto thread_cpu = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
  };
  volatile double sink = 0;
  for (const double end = thread_cpu() + 0.2; thread_cpu() < end;) sink = sink + 1;
  const double second = sample(hlm::test::http_get(port, "/metrics"),
                               "hlm_process_cpu_seconds_total{rank=\"0\",run=\"run-p\"}");
  EXPECT_GE(second - first, 0.19);
}

TEST(ProcessMetrics, CheckpointAgeAppearsWithTheFirstCheckpointAndGrows) {
  hlm::Metrics m;
  m.set_labels("run-c", 1);
  const int port = m.start_exposer(0);
  const std::string series = "hlm_checkpoint_age_seconds{rank=\"1\",run=\"run-c\",stage=\"pre\"}";
  EXPECT_EQ(hlm::test::http_get(port, "/metrics").find("hlm_checkpoint_age_seconds"),
            std::string::npos)
      << "an age before any checkpoint would be false";
  m.checkpoint_written("pre", 0.1);
  const double young = sample(hlm::test::http_get(port, "/metrics"), series);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double older = sample(hlm::test::http_get(port, "/metrics"), series);
  EXPECT_GE(young, 0);
  EXPECT_LT(young, 0.3);
  EXPECT_GE(older - young, 0.25);
  m.checkpoint_written("pre", 0.1);
  EXPECT_LT(sample(hlm::test::http_get(port, "/metrics"), series), older);
  m.training_finished("pre");
  EXPECT_EQ(hlm::test::http_get(port, "/metrics").find("hlm_checkpoint_age_seconds"),
            std::string::npos);
}

TEST(ProcessMetrics, StageStatusHasOneForThePresentStatusOnly) {
  hlm::Metrics m;
  m.set_labels("run-s", 0);
  const int port = m.start_exposer(0);
  m.stage_status("tok", "running");
  m.stage_status("tok", "done");
  m.stage_status("fit", "cached");
  const std::string body = hlm::test::http_get(port, "/metrics");
  const auto status = [&](const std::string& stage, const std::string& s) {
    return sample(body, "hlm_stage_status{rank=\"0\",run=\"run-s\",stage=\"" + stage +
                            "\",status=\"" + s + "\"}");
  };
  EXPECT_EQ(status("tok", "done"), 1);
  EXPECT_EQ(status("tok", "running"), 0);
  EXPECT_EQ(status("tok", "failed"), 0);
  EXPECT_EQ(status("fit", "cached"), 1);
  EXPECT_EQ(status("fit", "done"), 0);
  EXPECT_THROW(m.stage_status("tok", "finished"), hlm::InternalError);
}

TEST(ProcessMetrics, SamplesAreCountedPerStep) {
  hlm::Metrics m;
  m.set_labels("run-n", 0);
  const int port = m.start_exposer(0);
  for (int i = 1; i <= 3; ++i) m.train_step("pre", step_of(i));
  EXPECT_EQ(sample(hlm::test::http_get(port, "/metrics"),
                   "hlm_train_samples_total{rank=\"0\",run=\"run-n\",stage=\"pre\"}"),
            24);
}

TEST(Energy, NothingIsExportedWhereNoSourceIsReadable) {
  // This machine has neither powercap nor an NVIDIA driver; on one that has, the sources are
  // read instead and this test says so.
  if (hlm::energy_sources().any())
    GTEST_SKIP() << "this host has an energy source: " << hlm::energy_sources().describe();
  EXPECT_NE(hlm::energy_sources().describe().find("no energy source readable"), std::string::npos);
  hlm::Metrics m;
  const int port = m.start_exposer(0);
  for (int i = 1; i <= 3; ++i) m.train_step("pre", step_of(i));
  const std::string body = hlm::test::http_get(port, "/metrics");
  for (const char* name : {"hlm_cpu_energy_joules_total", "hlm_gpu_energy_joules_total",
                           "hlm_gpu_power_watts", "hlm_train_energy_joules_per_sample{"})
    EXPECT_EQ(body.find(name), std::string::npos) << name << " without a source:\n" << body;
}

TEST(Energy, RaplPackagesAreSummedAcrossCounterWraps) {
  const hlm::test::ScratchDir root_scratch("hlm_powercap");
  const fs::path& root = root_scratch.path;
  make_package(root, "intel-rapl:0", "package-0", 900'000'000, 1'000'000'000);
  make_package(root, "intel-rapl:1", "package-1", 5'000'000, 1'000'000'000);
  make_package(root, "intel-rapl:0:0", "core", 1, 1'000'000'000);  // a part, not a package
  make_package(root, "intel-rapl:2", "psys", 7, 1'000'000'000);    // includes the packages
  hlm::RaplReader rapl(root.string());
  ASSERT_TRUE(rapl.available()) << rapl.unavailable_reason();
  EXPECT_EQ(rapl.total_joules(), 0);                        // counted from the first read
  write(root / "intel-rapl:2" / "energy_uj", "99000007");   // +99 J, not counted
  write(root / "intel-rapl:0" / "energy_uj", "950000000");  // +50 J
  write(root / "intel-rapl:1" / "energy_uj", "6000000");    // +1 J
  const auto packages = rapl.read();
  ASSERT_EQ(packages.size(), 2u);
  EXPECT_EQ(packages[0].name, "package-0");
  EXPECT_DOUBLE_EQ(packages[0].joules, 50);
  EXPECT_DOUBLE_EQ(packages[1].joules, 1);
  write(root / "intel-rapl:0" / "energy_uj", "20000000");  // wrapped: +50 J to the end, +20 J
  EXPECT_DOUBLE_EQ(rapl.total_joules(), 50 + 70 + 1);
}

TEST(Energy, RaplSaysWhyItHasNoReading) {
  const hlm::test::ScratchDir root_scratch("hlm_powercap_none");
  const fs::path& root = root_scratch.path;
  EXPECT_FALSE(hlm::RaplReader((root / "absent").string()).available());
  EXPECT_NE(hlm::RaplReader((root / "absent").string()).unavailable_reason().find("absent"),
            std::string::npos);
  hlm::RaplReader empty(root.string());
  EXPECT_FALSE(empty.available());
  EXPECT_NE(empty.unavailable_reason().find("no intel-rapl"), std::string::npos);
  fs::create_directories(root / "intel-rapl:0");  // present, energy_uj unreadable (root only)
  hlm::RaplReader unreadable(root.string());
  EXPECT_FALSE(unreadable.available());
  EXPECT_NE(unreadable.unavailable_reason().find("energy_uj is not readable"), std::string::npos);
}

// With a readable package counter, each step charges the rank its share of the energy used
// since its stage's first step, per sample; the package counter is exported as it stands.
TEST(Energy, EnergyPerSampleIsTheRanksShareOverTheSamplesSinceTheFirstStep) {
  const hlm::test::ScratchDir root_scratch("hlm_powercap_train");
  const fs::path& root = root_scratch.path;
  make_package(root, "intel-rapl:0", "package-0", 1'000'000, 1'000'000'000);
  hlm::EnergySources sources(root.string());
  ASSERT_TRUE(sources.any()) << sources.describe();
  hlm::Metrics m;
  m.set_labels("run-e", 1);
  m.set_energy_sources(&sources);
  m.set_energy_share(2, -1);  // two ranks on this node
  const int port = m.start_exposer(0);
  m.train_step("pre", step_of(1));                         // the start: 1 J on the counter
  write(root / "intel-rapl:0" / "energy_uj", "33000000");  // +32 J
  m.train_step("pre", step_of(2));                         // 8 samples
  write(root / "intel-rapl:0" / "energy_uj", "65000000");  // +32 J
  m.train_step("pre", step_of(3));                         // 8 more
  const std::string body = hlm::test::http_get(port, "/metrics");
  // (64 J / 2 ranks) / 16 samples
  EXPECT_DOUBLE_EQ(sample(body,
                          "hlm_train_energy_joules_per_sample{rank=\"1\",run=\"run-e\","
                          "stage=\"pre\"}"),
                   2.0)
      << body;
  EXPECT_DOUBLE_EQ(sample(body,
                          "hlm_cpu_energy_joules_total{package=\"package-0\",rank=\"1\","
                          "run=\"run-e\"}"),
                   64.0)
      << body;
}
