// Energy sources for the metrics: CPU package energy from Linux powercap (RAPL) and, where an
// NVIDIA driver is installed, GPU energy, power, memory and utilisation from NVML, loaded at run
// time with dlopen so that a CPU build needs no NVIDIA library. Neither is assumed: a host
// without them reports none, and nothing is exported for it.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hlm {

// Package energy counters under <root>/intel-rapl:<N>/ (energy_uj, max_energy_range_uj, name),
// the domains named package-<N> only (psys, on some Intel machines, already includes them).
// The counters wrap at max_energy_range_uj; totals are accumulated across wraps from the first
// read, so read more often than one wrap (minutes at full load; every scrape and step reads).
class RaplReader {
 public:
  explicit RaplReader(std::string root = "/sys/class/powercap");
  bool available() const { return !domains_.empty(); }
  // Why there is no reading ("" when available): names the folder and what was missing.
  const std::string& unavailable_reason() const { return reason_; }
  struct Package {
    std::string name;  // "package-0", as the kernel names the domain
    double joules;     // since this reader was created
  };
  std::vector<Package> read();
  double total_joules();  // every package, summed

 private:
  struct Domain {
    std::string dir, name;
    uint64_t range_uj = 0, last_uj = 0;
    double joules = 0;
  };
  std::mutex mutex_;
  std::vector<Domain> domains_;
  std::string reason_;
};

// NVML's view of the GPUs of this host. Values are std::nullopt where the driver does not give
// them (total energy needs a Volta or newer GPU).
class NvmlReader {
 public:
  NvmlReader();  // loads libnvidia-ml.so.1 if present; never throws
  ~NvmlReader();
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;
  bool available() const { return gpus_ > 0; }
  const std::string& unavailable_reason() const { return reason_; }
  struct Gpu {
    int index;
    std::optional<double> energy_joules;  // since the driver loaded
    std::optional<double> power_watts, memory_used_bytes, utilization_ratio;
  };
  std::vector<Gpu> read() const;
  // GPU `index` alone (NVML's index); nullopt where there is no such GPU.
  std::optional<Gpu> read(int index) const;
  // GPU `index`'s energy alone (the per-step read); nullopt where NVML does not give it.
  std::optional<double> energy_joules(int index) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  int gpus_ = 0;
  std::string reason_;
};

// The sources this process reads, found once. describe() is the line for the log and reports.
class EnergySources {
 public:
  explicit EnergySources(std::string powercap_root = "/sys/class/powercap");
  RaplReader& rapl() { return rapl_; }
  const NvmlReader& nvml() const { return nvml_; }
  bool any() const { return rapl_.available() || nvml_.available(); }
  std::string describe() const;

 private:
  RaplReader rapl_;
  NvmlReader nvml_;
};

EnergySources& energy_sources();

}  // namespace hlm
