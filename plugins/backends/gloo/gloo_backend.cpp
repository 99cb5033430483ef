// The `gloo` backend: CPU process groups over TCP through c10d's ProcessGroupGloo.
// Each rank binds one local address: the named network interface's (across hosts, where every
// node names its interface alike, e.g. ib0 or eth0), else GLOO_SOCKET_IFNAME's, else `host`.
#include <chrono>
#include <cstdlib>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "hlm/backend.h"

namespace {

class GlooBackend : public hlm::Backend {
 public:
  GlooBackend(std::string interface, std::string host, int timeout_s)
      : interface_(std::move(interface)), host_(std::move(host)), timeout_s_(timeout_s) {
    const char* from_env = std::getenv("GLOO_SOCKET_IFNAME");
    if (interface_.empty() && from_env) interface_ = from_env;
  }

  std::string device(int) const override { return "cpu"; }

  c10::intrusive_ptr<c10d::Backend> create_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                 int rank, int world_size) override {
    auto options = c10d::ProcessGroupGloo::Options::create();
    options->timeout = std::chrono::seconds(timeout_s_);
    options->devices.push_back(interface_.empty()
                                   ? c10d::ProcessGroupGloo::createDeviceForHostname(host_)
                                   : c10d::ProcessGroupGloo::createDeviceForInterface(interface_));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
  }

 private:
  std::string interface_;
  std::string host_;
  int timeout_s_;
};

const hlm_param_decl kParams[] = {
    {"interface", "string", "\"\"",
     "network interface Gloo binds on every rank, e.g. eth0 (\"\" = GLOO_SOCKET_IFNAME, else "
     "host)"},
    {"host", "string", "\"127.0.0.1\"", "address Gloo binds when no interface is named"},
    {"timeout_s", "int[1,]", "300", "collective timeout in seconds"},
};

hlm::Backend* make_gloo(const nlohmann::json& p) {
  return new GlooBackend(p.at("interface").get<std::string>(), p.at("host").get<std::string>(),
                         p.at("timeout_s").get<int>());
}

}  // namespace

HLM_PLUGIN(hlm::Backend, "gloo", "1.0.0", "CPU all-reduce over TCP (c10d Gloo)", kParams, make_gloo)
