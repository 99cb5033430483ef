// Output forms of a loaded workflow: canonical JSON for hashing, the dry-run plan, and the
// resolved YAML written to run directories (loadable again, giving the same instances).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "workflow/workflow.h"

namespace hlm::workflow {

std::string canonical_json(const nlohmann::json& value) {
  // nlohmann::json keeps object keys sorted and prints the shortest round-trip float.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// "${" in resolved text is literal (it was written "$${"): escape it again for reloading.
nlohmann::json escape_references(const nlohmann::json& value) {
  if (value.is_string()) {
    std::string text = value.get<std::string>(), out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 2, "${") == 0) out += "$";
      out += text[i];
    }
    return out;
  }
  nlohmann::json out = value;
  if (value.is_structured())
    for (auto& [key, item] : out.items()) item = escape_references(item);
  return out;
}

void emit(YAML::Emitter& out, const nlohmann::json& value) {
  if (value.is_null()) {
    out << YAML::Null;
  } else if (value.is_string()) {
    out << YAML::DoubleQuoted << value.get<std::string>();  // "100" must stay a string
  } else if (value.is_object()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginMap;
    if (value.contains("plugin")) {
      out << YAML::Key << "plugin" << YAML::Value;
      emit(out, value["plugin"]);
    }
    for (const auto& [key, item] : value.items()) {
      if (key == "plugin") continue;  // written first: it says how to read the rest
      out << YAML::Key << key << YAML::Value;
      emit(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    bool flat = true;
    for (const auto& item : value) flat = flat && !item.is_structured();
    if (flat) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const auto& item : value) emit(out, item);
    out << YAML::EndSeq;
  } else {
    out << value.dump();  // numbers and bools as JSON writes them: 1.0 stays a float
  }
}

void erase_pointer(nlohmann::json& value, const std::string& dotted) {
  std::string pointer;
  for (char c : dotted) pointer += c == '.' ? '/' : c;
  const nlohmann::json::json_pointer path("/" + pointer);
  if (value.contains(path)) value[path.parent_pointer()].erase(path.back());
}

// Plugins named in params, as "path=name".
void collect_plugins(const nlohmann::json& value, const std::string& path,
                     std::vector<std::string>* out) {
  if (value.is_object() && value.contains("plugin") && value["plugin"].is_string())
    out->push_back(path + "=" + value["plugin"].get<std::string>());
  if (!value.is_structured()) return;
  for (const auto& [key, item] : value.items())
    collect_plugins(
        item, path.empty() ? key : path + (value.is_array() ? "[" + key + "]" : "." + key), out);
}

void flatten(const nlohmann::json& value, const std::string& path, std::ostringstream& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, item] : value.items())
      flatten(item, path.empty() ? key : path + "." + key, out);
    return;
  }
  out << "     " << (path.empty() ? "(none)" : path + " = " + canonical_json(value)) << "\n";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "-" : out;
}

}  // namespace

std::string Workflow::resolved_yaml() const {
  // Instances of one stage are contiguous; fold them back into one stage with its matrix.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const StageInstance*>> groups;
  std::map<std::string, std::string> base_of;
  for (const auto& instance : stages) {
    if (!groups.count(instance.base_id)) order.push_back(instance.base_id);
    groups[instance.base_id].push_back(&instance);
    base_of[instance.id] = instance.base_id;
  }
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "vars" << YAML::Value;
  emit(out, escape_references(vars.is_null() ? nlohmann::json::object() : vars));
  out << YAML::Key << "settings" << YAML::Value;
  emit(out, escape_references(settings));
  out << YAML::Key << "runner" << YAML::Value;
  emit(out, escape_references(runner));
  out << YAML::Key << "stages" << YAML::Value << YAML::BeginSeq;
  for (const auto& base : order) {
    const auto& group = groups[base];
    const StageInstance& first = *group.front();
    nlohmann::json needs = nlohmann::json::array(), params = first.params;
    nlohmann::json matrix = nlohmann::json::object();
    for (const auto& need : first.needs)
      if (std::find(needs.begin(), needs.end(), base_of[need]) == needs.end())
        needs.push_back(base_of[need]);
    for (const auto& [key, unused] : first.matrix_values.items()) {
      erase_pointer(params, key);
      matrix[key] = nlohmann::json::array();
      for (const auto* instance : group) {
        const auto& value = instance->matrix_values[key];
        if (std::find(matrix[key].begin(), matrix[key].end(), value) == matrix[key].end())
          matrix[key].push_back(value);
      }
    }
    out << YAML::BeginMap << YAML::Key << "id" << YAML::Value << base;
    out << YAML::Key << "kind" << YAML::Value << first.kind;
    out << YAML::Key << "needs" << YAML::Value;
    emit(out, needs);
    out << YAML::Key << "params" << YAML::Value;
    emit(out, escape_references(params));
    if (!matrix.empty()) {
      out << YAML::Key << "matrix" << YAML::Value;
      emit(out, escape_references(matrix));
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string dry_run_plan(const Workflow& workflow, const CacheKeyFn& cache_key) {
  std::ostringstream out;
  out << "workflow " << workflow.name << " (" << workflow.file << "): " << workflow.stages.size()
      << " stage instance" << (workflow.stages.size() == 1 ? "" : "s") << "\n";
  std::map<std::string, std::string> keys;
  size_t number = 0;
  for (const auto& instance : workflow.stages) {
    std::vector<std::string> matrix, plugins;
    for (const auto& [key, value] : instance.matrix_values.items())
      matrix.push_back(key + "=" + canonical_json(value));
    collect_plugins(instance.params, "", &plugins);
    out << ++number << ". " << instance.id << " (kind " << instance.kind << ")\n";
    out << "   needs:   " << join(instance.needs) << "\n";
    if (!matrix.empty()) out << "   matrix:  " << join(matrix) << "\n";
    out << "   plugins: " << join(plugins) << "\n";
    if (cache_key) {
      std::map<std::string, std::string> needed;
      for (const auto& need : instance.needs) needed[need] = keys.at(need);
      const PlannedCache planned = cache_key(instance, needed);
      keys[instance.id] = planned.key;
      out << "   cache:   " << planned.key << "\n";
      if (!planned.reuse.empty()) out << "   reuse:   " << planned.reuse << "\n";
    }
    out << "   params:\n";
    flatten(instance.params, "", out);
  }
  for (const auto& stage : workflow.left_out)
    out << "left out: " << stage.id << " (" << stage.reason << ")\n";
  return out.str();
}

}  // namespace hlm::workflow
