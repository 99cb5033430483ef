// The `gloo` backend: CPU process groups over TCP through c10d's ProcessGroupGloo.
#include <chrono>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "hlm/backend.h"

namespace {

class GlooBackend : public hlm::Backend {
 public:
  GlooBackend(std::string interface_host, int timeout_s)
      : host_(std::move(interface_host)), timeout_s_(timeout_s) {}

  std::string device(int) const override { return "cpu"; }

  c10::intrusive_ptr<c10d::ProcessGroup> create_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int world_size) override {
    auto options = c10d::ProcessGroupGloo::Options::create();
    options->timeout = std::chrono::seconds(timeout_s_);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(host_));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
  }

 private:
  std::string host_;
  int timeout_s_;
};

const hlm_param_decl kParams[] = {
    {"host", "string", "\"127.0.0.1\"", "address of the interface Gloo binds (this node's)"},
    {"timeout_s", "int", "300", "collective timeout in seconds"},
};

hlm::Backend* make_gloo(const nlohmann::json& p) {
  return new GlooBackend(p.at("host").get<std::string>(), p.at("timeout_s").get<int>());
}

}  // namespace

HLM_PLUGIN(hlm::Backend, "gloo", "1.0.0", "CPU all-reduce over TCP (c10d Gloo)", kParams, make_gloo)
