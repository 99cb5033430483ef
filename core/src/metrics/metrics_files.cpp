// Files around metrics: process memory and CPU time and Prometheus file_sd target files.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hlm/errors.h"
#include "metrics/metrics.h"
#include "util/atomic_file.h"
#include "util/host.h"

namespace hlm {

uint64_t process_resident_memory_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size_pages = 0, resident_pages = 0;
  const int n = std::fscanf(f, "%llu %llu", &size_pages, &resident_pages);
  std::fclose(f);
  if (n != 2) return 0;
  return resident_pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string node_name() {
  if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm != nullptr && *slurm != 0)
    return slurm;
  return host_name();
}

double process_cpu_seconds() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void write_file_sd(const std::string& path, const std::vector<std::string>& targets,
                   const std::map<std::string, std::string>& labels) {
  const nlohmann::json doc = nlohmann::json::array({{{"targets", targets}, {"labels", labels}}});
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  // Prometheus re-reads the file on change; a rename means it never sees half a document.
  write_file_atomic(path, doc.dump(2) + "\n");
}

void remove_file_sd(const std::string& path) {
  std::error_code ec;  // already gone is fine; a failure here must not mask the run's outcome
  std::filesystem::remove(path, ec);
}

bool is_wildcard_address(const std::string& address) {
  return address == "0.0.0.0" || address == "::" || address == "[::]";
}

std::string scrape_address(const std::string& bind_address, int port) {
  std::string host = bind_address;
  if (is_wildcard_address(host) || host.empty()) {
    host = host_name();
  } else if (host.find(':') != std::string::npos && host.front() != '[') {
    host = "[" + host + "]";
  }
  return host + ":" + std::to_string(port);
}

}  // namespace hlm
