// Finds, loads and checks plugin libraries, and creates objects from them. A library stays
// loaded while any object it made is alive (each object holds a reference to it).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hlm/plugin.h"

namespace hlm {

struct LoadedLibrary;  // a dlopen handle, closed when the last user goes

struct PluginInfo {
  std::string kind, name, version, description, fingerprint, path;
  uint32_t abi_major = 0, abi_minor = 0;
  std::vector<hlm_param_decl> params;
  const hlm_plugin_descriptor* descriptor = nullptr;
  std::shared_ptr<LoadedLibrary> library;
};

class PluginHost {
 public:
  // Directories searched, in order: the given ones, then $HLM_PLUGIN_PATH (':'-separated),
  // then the build tree's plugin folder and <exe>/../lib/hlm/plugins.
  static std::vector<std::string> default_search_path();

  // Loads every libhlm_plugin_*.so found. Throws PluginError for a library built for another
  // ABI or fingerprint, or a duplicate (kind, name).
  void load_all(const std::vector<std::string>& directories);
  // Loads one library file (also used by tests).
  const PluginInfo& load_library(const std::string& path);

  const std::map<std::string, PluginInfo>& plugins() const { return plugins_; }
  std::vector<std::string> names(const std::string& kind) const;
  const PluginInfo& get(const std::string& kind, const std::string& name) const;

  // Creates an object of the plugin's interface type from its JSON parameter block;
  // parameters left out take the plugin's declared defaults.
  template <class Interface>
  std::shared_ptr<Interface> create(const std::string& kind, const std::string& name,
                                    const nlohmann::json& params) const {
    const PluginInfo& info = get(kind, name);
    void* object = create_raw(info, params);
    auto library = info.library;
    auto destroy = info.descriptor->destroy;
    return std::shared_ptr<Interface>(static_cast<Interface*>(object),
                                      [library, destroy](Interface* p) { destroy(p); });
  }

 private:
  void* create_raw(const PluginInfo& info, const nlohmann::json& params) const;
  std::map<std::string, PluginInfo> plugins_;  // key: kind + "/" + name
};

// The fingerprint this host was built with; plugins must match it exactly.
const char* host_fingerprint();

}  // namespace hlm
