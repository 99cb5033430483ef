// Finds, loads and checks plugin libraries, and creates objects from them. A library stays
// loaded while any object it made is alive (each object holds a reference to it).
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlm/plugin.h"

namespace hlm {

struct LoadedLibrary;  // a dlopen handle, closed when the last user goes

// A library on the plugin path that did not load, and why (the message names the file).
struct RefusedLibrary {
  std::string path, reason;
};

struct PluginInfo {
  std::string kind, name, version, description, fingerprint, path;
  uint32_t abi_major = 0, abi_minor = 0;
  std::string sdk_version;  // "" from a plugin older than ABI 1.1
  std::vector<hlm_param_decl> params;
  std::string build_id;  // of the library file: part of the cache key of stages using it
  // The host's copy of the plugin's descriptor (fields it did not have are zero).
  std::shared_ptr<const hlm_plugin_descriptor> descriptor;
  std::shared_ptr<LoadedLibrary> library;
};

class PluginHost {
 public:
  // Directories searched, in order: the given ones, then $HLM_PLUGIN_PATH (':'-separated),
  // then <exe>/../plugins (the build tree) and <exe>/../lib/hlm/plugins (an install).
  static std::vector<std::string> default_search_path();

  // Loads every libhlm_plugin_*.so found. A library that cannot load (another ABI or
  // fingerprint, a duplicate (kind, name), a broken file) is kept in refused() instead.
  void load_all(const std::vector<std::string>& directories);
  // Loads one library file (also used by tests); throws PluginError naming it.
  const PluginInfo& load_library(const std::string& path);

  const std::map<std::string, PluginInfo>& plugins() const { return plugins_; }
  const std::vector<RefusedLibrary>& refused() const { return refused_; }
  // "; not loaded: <reason>" for each refused library ("" when none): added to errors about
  // a plugin that cannot be found, since the refused library may be the one meant.
  std::string refused_summary() const;
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
  std::vector<RefusedLibrary> refused_;
};

// The fingerprint this host was built with; plugins must match it exactly.
const char* host_fingerprint();

}  // namespace hlm
