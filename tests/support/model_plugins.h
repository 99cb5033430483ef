// Builds model plugins from the build tree for engine tests; the plugin host fills in declared
// defaults, so a test names only the parameters it changes.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hlm/model.h"
#include "plugin/plugin_host.h"

namespace hlm::test {

class ModelPlugins {
 public:
  std::shared_ptr<Model> make(const std::string& name,
                              nlohmann::json params = nlohmann::json::object()) {
    if (!host_.plugins().count("model/" + name))
      host_.load_library(std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_" + name + ".so");
    return host_.create<Model>("model", name, params);
  }

 private:
  PluginHost host_;
};

inline int64_t parameter_count(Model& model) {
  int64_t n = 0;
  for (const auto& p : model.module().parameters()) n += p.numel();
  return n;
}

}  // namespace hlm::test
