// Reading RAPL through powercap's files and NVML through dlopen (see energy.h).
#include "metrics/energy.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace hlm {
namespace {

std::optional<uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

std::string read_word(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

RaplReader::RaplReader(std::string root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    reason_ = root + " does not exist (no powercap in this kernel or container)";
    return;
  }
  std::vector<std::string> dirs;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    // Packages are intel-rapl:<N> (AMD's too); intel-rapl:<N>:<M> are their parts (core, dram).
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos)
      dirs.push_back(entry.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) {
    reason_ = root + " has no intel-rapl:<N> package domain";
    return;
  }
  for (const auto& dir : dirs) {
    const auto energy = read_number(dir + "/energy_uj");
    const auto range = read_number(dir + "/max_energy_range_uj");
    if (!energy || !range) {
      // Since Linux 5.10 energy_uj is readable by root only (CVE-2020-8694).
      reason_ = dir + "/energy_uj is not readable by this user";
      continue;
    }
    const std::string name = read_word(dir + "/name");
    if (name.rfind("package-", 0) != 0) continue;
    domains_.push_back({dir, name, *range, *energy, 0});
  }
  if (!domains_.empty())
    reason_.clear();
  else if (reason_.empty())
    reason_ = root + " has no readable package-<N> domain";
}

std::vector<RaplReader::Package> RaplReader::read() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Package> out;
  for (auto& d : domains_) {
    if (const auto now = read_number(d.dir + "/energy_uj")) {
      // The counter restarts from 0 after max_energy_range_uj.
      const uint64_t delta = *now >= d.last_uj ? *now - d.last_uj : d.range_uj - d.last_uj + *now;
      d.joules += double(delta) * 1e-6;
      d.last_uj = *now;
    }
    out.push_back({d.name, d.joules});
  }
  return out;
}

double RaplReader::total_joules() {
  double total = 0;
  for (const auto& p : read()) total += p.joules;
  return total;
}

// The few NVML entry points used, by their C ABI (nvml.h; NVML_SUCCESS is 0).
struct NvmlReader::Api {
  using Device = void*;
  struct Memory {
    unsigned long long total, free, used;
  };
  struct Utilization {
    unsigned int gpu, memory;
  };
  void* library = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, Device*) = nullptr;
  int (*energy)(Device, unsigned long long*) = nullptr;  // millijoules
  int (*power)(Device, unsigned int*) = nullptr;         // milliwatts
  int (*memory)(Device, Memory*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;

  template <typename F>
  bool load(F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(library, name));
    return f != nullptr;
  }
};

NvmlReader::NvmlReader() : api_(std::make_unique<Api>()) {
  Api& a = *api_;
  a.library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (a.library == nullptr) {
    reason_ = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
    return;
  }
  if (!a.load(a.init, "nvmlInit_v2") || !a.load(a.shutdown, "nvmlShutdown") ||
      !a.load(a.count, "nvmlDeviceGetCount_v2") ||
      !a.load(a.handle, "nvmlDeviceGetHandleByIndex_v2")) {
    reason_ = "libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old)";
    return;
  }
  a.load(a.energy, "nvmlDeviceGetTotalEnergyConsumption");
  a.load(a.power, "nvmlDeviceGetPowerUsage");
  a.load(a.memory, "nvmlDeviceGetMemoryInfo");
  a.load(a.utilization, "nvmlDeviceGetUtilizationRates");
  if (const int rc = a.init(); rc != 0) {
    reason_ = "nvmlInit_v2 failed with NVML error " + std::to_string(rc);
    a.shutdown = nullptr;
    return;
  }
  unsigned int n = 0;
  if (a.count(&n) != 0 || n == 0) {
    reason_ = "NVML sees no GPU";
    return;
  }
  gpus_ = int(n);
}

NvmlReader::~NvmlReader() {
  if (api_->shutdown != nullptr && gpus_ > 0) api_->shutdown();
  // The library stays loaded: NVML may keep threads of its own until the process ends.
}

std::vector<NvmlReader::Gpu> NvmlReader::read() const {
  std::vector<Gpu> out;
  for (int i = 0; i < gpus_; ++i)
    if (auto gpu = read(i)) out.push_back(*gpu);
  return out;
}

std::optional<NvmlReader::Gpu> NvmlReader::read(int index) const {
  const Api& a = *api_;
  Api::Device device = nullptr;
  if (index < 0 || index >= gpus_ || a.handle(unsigned(index), &device) != 0) return std::nullopt;
  Gpu g{index, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  unsigned long long mj = 0;
  unsigned int mw = 0;
  Api::Memory memory{};
  Api::Utilization use{};
  if (a.energy != nullptr && a.energy(device, &mj) == 0) g.energy_joules = double(mj) * 1e-3;
  if (a.power != nullptr && a.power(device, &mw) == 0) g.power_watts = double(mw) * 1e-3;
  if (a.memory != nullptr && a.memory(device, &memory) == 0)
    g.memory_used_bytes = double(memory.used);
  if (a.utilization != nullptr && a.utilization(device, &use) == 0)
    g.utilization_ratio = double(use.gpu) / 100.0;
  return g;
}

std::optional<double> NvmlReader::energy_joules(int index) const {
  const Api& a = *api_;
  Api::Device device = nullptr;
  unsigned long long mj = 0;
  if (index < 0 || index >= gpus_ || a.energy == nullptr ||
      a.handle(unsigned(index), &device) != 0 || a.energy(device, &mj) != 0)
    return std::nullopt;
  return double(mj) * 1e-3;
}

EnergySources::EnergySources(std::string powercap_root) : rapl_(std::move(powercap_root)) {}

std::string EnergySources::describe() const {
  std::string rapl = rapl_.available() ? "CPU packages from RAPL"
                                       : "no CPU energy (" + rapl_.unavailable_reason() + ")";
  std::string nvml =
      nvml_.available() ? "GPUs from NVML" : "no GPU energy (" + nvml_.unavailable_reason() + ")";
  if (!any()) return "no energy source readable: " + rapl + ", " + nvml + "; no energy exported";
  return rapl + ", " + nvml;
}

EnergySources& energy_sources() {
  // Never destroyed: scrapes may read it while the process exits.
  static EnergySources* sources = new EnergySources();
  return *sources;
}

}  // namespace hlm
