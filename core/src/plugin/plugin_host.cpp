// Plugin discovery and loading with dlopen; ABI and fingerprint checks come before any call
// into the plugin beyond reading its descriptor.
#include "plugin/plugin_host.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "util/build_id.h"

namespace fs = std::filesystem;

namespace hlm {

struct LoadedLibrary {
  void* handle = nullptr;
  ~LoadedLibrary() {
    if (handle) dlclose(handle);
  }
};

const char* host_fingerprint() { return HLM_BUILD_FINGERPRINT; }

namespace {

// The plugin's descriptor as this host lays it out: fields the plugin did not have (an older
// minor version, smaller struct_size) stay zero; fields a newer plugin appended are not read.
std::shared_ptr<const hlm_plugin_descriptor> read_descriptor(const std::string& path,
                                                             const hlm_plugin_descriptor* given) {
  if (!given || given->abi_major != HLM_PLUGIN_ABI_MAJOR)
    throw PluginError(
        "{}: incompatible plugin ABI version (plugin: {}, host: {}); "
        "rebuild the plugin against this hlm's SDK",
        path, given ? given->abi_major : 0, HLM_PLUGIN_ABI_MAJOR);
  auto d = std::make_shared<hlm_plugin_descriptor>();
  std::memset(d.get(), 0, sizeof(*d));
  std::memcpy(d.get(), given, std::min<size_t>(given->struct_size, sizeof(*d)));
  const std::pair<const char*, bool> required[] = {{"kind", d->kind != nullptr},
                                                   {"name", d->name != nullptr},
                                                   {"fingerprint", d->fingerprint != nullptr},
                                                   {"create", d->create != nullptr},
                                                   {"destroy", d->destroy != nullptr}};
  for (const auto& [field, present] : required)
    if (!present)
      throw PluginError(
          "{}: plugin descriptor has no '{}' (struct_size {} bytes, ABI {}.{}); "
          "rebuild the plugin with the HLM_PLUGIN macro",
          path, field, given->struct_size, given->abi_major, given->abi_minor);
  return d;
}

// A plugin is code hlm runs as the user: refused when anyone besides its owner may replace it,
// i.e. the library file (followed through symlinks) or the folder holding it is writable by
// its group or by others.
void refuse_if_others_can_replace(const std::string& path) {
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  if (ec) return;  // dlopen reports a missing file with its own message
  for (const fs::path& checked : {file, file.parent_path()}) {
    const auto perms = fs::status(checked, ec).permissions();
    if (ec) continue;
    if ((perms & (fs::perms::group_write | fs::perms::others_write)) == fs::perms::none) continue;
    const bool folder = checked != file;
    throw PluginError(
        "{}: refused: {} {} is writable by {} (mode {:03o}), so another user could replace the "
        "code hlm would run; make it writable by its owner only: chmod go-w {}",
        path, folder ? "its folder" : "the library", checked.string(),
        (perms & fs::perms::others_write) != fs::perms::none ? "every user" : "its group",
        int(perms & fs::perms::mask), checked.string());
  }
}

}  // namespace

std::vector<std::string> PluginHost::default_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("HLM_PLUGIN_PATH")) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Beside the binary: <build>/bin/hlm finds <build>/plugins, an installed <prefix>/bin/hlm
    // finds <prefix>/lib/hlm/plugins (cmake --install puts them there).
    dirs.push_back((exe.parent_path().parent_path() / "plugins").string());
    dirs.push_back((exe.parent_path().parent_path() / "lib/hlm/plugins").string());
  }
  // The same folder named twice (HLM_PLUGIN_PATH and beside the binary) is searched once.
  std::vector<std::string> unique;
  for (const auto& d : dirs) {
    const std::string canonical = fs::weakly_canonical(d, ec).string();
    if (std::find(unique.begin(), unique.end(), canonical) == unique.end())
      unique.push_back(canonical);
  }
  return unique;
}

void PluginHost::load_all(const std::vector<std::string>& directories) {
  for (const auto& dir : directories) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("libhlm_plugin_", 0) == 0 && entry.path().extension() == ".so")
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    // One stale or broken library must not take the others down: it is listed with its
    // reason, and only a workflow that names its plugin fails.
    for (const auto& f : files) try {
        load_library(f);
      } catch (const PluginError& e) {
        refused_.push_back({f, e.what()});
      }
  }
}

const PluginInfo& PluginHost::load_library(const std::string& path) {
  refuse_if_others_can_replace(path);
  auto library = std::make_shared<LoadedLibrary>();
  library->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library->handle)
    throw PluginError(
        "{}: cannot load plugin: {} (rebuild it against this hlm, "
        "or remove it from the plugin path)",
        path, dlerror());
  auto entry =
      reinterpret_cast<hlm_plugin_entry_fn>(dlsym(library->handle, HLM_PLUGIN_ENTRY_SYMBOL));
  if (!entry)
    throw PluginError(
        "{}: not an hlm plugin: no '{}' symbol (a plugin defines it with the HLM_PLUGIN macro)",
        path, HLM_PLUGIN_ENTRY_SYMBOL);
  const auto d = read_descriptor(path, entry());
  if (std::string(d->fingerprint) != host_fingerprint())
    throw PluginError(
        "{}: plugin '{}' was built for '{}' but this hlm is '{}'; "
        "rebuild the plugin with the same LibTorch and compiler",
        path, d->name, d->fingerprint, host_fingerprint());
  const std::string key = std::string(d->kind) + "/" + d->name;
  if (auto it = plugins_.find(key); it != plugins_.end())
    throw PluginError(
        "{}: duplicate {} plugin '{}', already loaded from {}; "
        "remove one of them from the plugin path",
        path, d->kind, d->name, it->second.path);
  PluginInfo info;
  info.kind = d->kind;
  info.name = d->name;
  info.version = d->version ? d->version : "";
  info.description = d->description ? d->description : "";
  info.fingerprint = d->fingerprint;
  info.path = path;
  info.abi_major = d->abi_major;
  info.abi_minor = d->abi_minor;
  info.sdk_version = d->sdk_version ? d->sdk_version : "";
  if (d->params) info.params.assign(d->params, d->params + d->param_count);
  info.build_id = build_id_of(path);
  info.descriptor = d;
  info.library = library;
  return plugins_.emplace(key, std::move(info)).first->second;
}

std::vector<std::string> PluginHost::names(const std::string& kind) const {
  std::vector<std::string> out;
  for (const auto& [key, info] : plugins_)
    if (info.kind == kind) out.push_back(info.name);
  return out;
}

const PluginInfo& PluginHost::get(const std::string& kind, const std::string& name) const {
  auto it = plugins_.find(kind + "/" + name);
  if (it == plugins_.end())
    throw PluginError(
        "no {} plugin named '{}'{}; `hlm plugins` lists what is installed (search path: "
        "HLM_PLUGIN_PATH){}",
        kind, name, did_you_mean(name, names(kind)), refused_summary());
  return it->second;
}

std::string PluginHost::refused_summary() const {
  std::string out;
  for (const auto& r : refused_) out += "; not loaded: " + r.reason;
  return out;
}

void* PluginHost::create_raw(const PluginInfo& info, const nlohmann::json& given) const {
  // Parameters the caller left out take the plugin's declared defaults, as workflow
  // validation would give them, so programmatic callers name only what they change.
  nlohmann::json params = given.is_null() ? nlohmann::json::object() : given;
  if (params.is_object())
    for (const hlm_param_decl& decl : info.params)
      if (decl.default_json && !params.contains(decl.name)) try {
          params[decl.name] = nlohmann::json::parse(decl.default_json);
        } catch (const nlohmann::json::exception&) {
          throw PluginError("{} plugin '{}' ({}): the default of '{}' is not valid JSON: {}",
                            info.kind, info.name, info.path, decl.name, decl.default_json);
        }
  char error[1024] = {0};
  void* object = nullptr;
  if (info.descriptor->create(&params, &object, error, sizeof(error)) != 0 || !object)
    throw PluginError("{} plugin '{}' ({}) failed to start: {}", info.kind, info.name, info.path,
                      error);
  return object;
}

}  // namespace hlm
