// Stage cache keys (see cache_key.h).
#include "engine/cache_key.h"

#include <filesystem>

#include "engine/run_directory.h"
#include "engine/stage.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "util/build_id.h"

namespace fs = std::filesystem;

namespace hlm {
namespace {

// Every {"plugin": name} block in the params, with the plugin kind from the param's type.
void collect_plugins(const nlohmann::json& value, const std::string& type,
                     const PluginHost& plugins, nlohmann::json& out) {
  const std::string prefix = type.rfind("list:", 0) == 0 ? type.substr(5) : type;
  if (prefix.rfind("plugin:", 0) != 0) return;
  const std::string kind = prefix.substr(7);
  auto add = [&](const nlohmann::json& block) {
    const auto& info = plugins.get(kind, block.at("plugin"));
    out.push_back(info.kind + "/" + info.name + "@" + info.version + "#" + info.build_id);
  };
  if (value.is_array())
    for (const auto& block : value) add(block);
  else if (value.is_object())
    add(value);
}

// The newest finished manifest of this stage id among the workflow's runs, or null.
nlohmann::json newest_finished(const std::string& runs_dir, const std::string& workflow_name,
                               const std::string& instance_id) {
  nlohmann::json best;
  std::string best_time;
  std::error_code ec;
  for (const auto& run : fs::directory_iterator(runs_dir + "/" + workflow_name, ec)) {
    std::optional<nlohmann::json> m;
    try {
      m = read_manifest((run.path() / instance_id).string());
    } catch (const Error&) {
      continue;  // a corrupt manifest is no stage to compare with
    }
    if (!m || m->value("status", "") != "done" || m->contains("reused_from")) continue;
    const std::string finished = m->value("finished_at", "");
    if (best.is_null() || finished > best_time) {
      best = *m;
      best["dir"] = (run.path() / instance_id).string();
      best_time = finished;
    }
  }
  return best;
}

// `e` again, of its own type, with `where` before its message.
template <typename E>
[[noreturn]] void rethrow_at(const E& e, const std::string& where) {
  throw E(where + e.what());
}

}  // namespace

nlohmann::json stage_external_inputs(const workflow::StageInstance& instance,
                                     const PluginHost& plugins) {
  const auto& inputs = stage_kind(instance.kind).external_inputs;
  if (!inputs) return nullptr;
  const std::string where =
      fmt::format("{}:{}: stage '{}': ", instance.file, instance.line, instance.id);
  try {
    return inputs(instance.params, plugins);
  } catch (const ConfigError& e) {
    rethrow_at(e, where);
  } catch (const DataError& e) {
    rethrow_at(e, where);
  } catch (const PluginError& e) {
    rethrow_at(e, where);
  }
}

CacheKey stage_cache_key(const workflow::StageInstance& instance,
                         const std::map<std::string, std::string>& needed_keys,
                         const PluginHost& plugins) {
  const StageKind& kind = stage_kind(instance.kind);
  CacheKey out;
  out.parts["stage"] = kind.kind + "@" + kind.version;
  out.parts["build"] = std::string(HLM_VERSION) + ";" + host_build_identity();
  out.parts["params"] = instance.params;
  out.parts["plugins"] = nlohmann::json::array();
  for (const auto& spec : kind.params)
    if (instance.params.contains(spec.name))
      collect_plugins(instance.params.at(spec.name), spec.type, plugins, out.parts["plugins"]);
  out.parts["data"] = stage_external_inputs(instance, plugins);
  out.parts["needs"] = nlohmann::json::object();
  for (const auto& need : instance.needs) out.parts["needs"][need] = needed_keys.at(need);
  out.key = hex64(fnv1a64(workflow::canonical_json(out.parts)));
  return out;
}

std::string cache_reuse_note(const CacheKey& key, const std::string& runs_dir,
                             const std::string& workflow_name, const std::string& instance_id) {
  if (const auto dir = cached_stage_dir(runs_dir, key.key)) return "reused from " + *dir;
  const nlohmann::json previous = newest_finished(runs_dir, workflow_name, instance_id);
  if (previous.is_null())
    return "runs: no finished '" + instance_id + "' under " + runs_dir + "/" + workflow_name;
  const nlohmann::json parts = previous.value("cache_parts", nlohmann::json());
  if (parts.is_null())
    return "runs: " + previous.value("dir", "") +
           " has no recorded key parts (made by an older hlm)";
  std::string changed;
  for (const auto& [name, value] : key.parts.items())
    if (parts.value(name, nlohmann::json()) != value)
      changed += (changed.empty() ? "" : ", ") + name;
  if (changed.empty())
    return "runs: the key matches " + previous.value("dir", "") + " but its artifacts are gone";
  return "runs: " + changed + " changed since " + previous.value("dir", "");
}

}  // namespace hlm
