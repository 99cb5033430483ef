// Stage definitions -> stage instances: key and reference checks, matrix expansion (one
// instance per combination, keys in sorted order) and run order.
#include "workflow/stages.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "workflow/conditions.h"
#include "workflow/dag.h"
#include "workflow/overrides.h"
#include "workflow/params.h"

namespace hlm::workflow::detail {

namespace {

const std::vector<std::string> kStageKeys = {"id", "kind", "needs", "params", "matrix", "when"};

struct StageDef {
  std::string id;
  std::string kind;
  std::vector<std::pair<std::string, Loc>> needs;
  Node params;
  std::vector<Entry> matrix;  // sorted by key
  std::optional<Node> when;   // the stage runs only when this condition holds
  Loc loc;
};

std::string scalar_of(const Node& stage, const std::string& key, const std::string& owner) {
  const Node* v = stage.find(key);
  if (!v) fail(stage.loc, "missing required key '" + key + "' in " + owner);
  if (!v->is_scalar())
    fail(v->loc, "'" + key + "' in " + owner + " must be a name, not " + v->describe());
  return v->text;
}

StageDef parse_stage(const Node& stage, const Schema& schema) {
  StageDef def;
  def.loc = stage.loc;
  def.id = scalar_of(stage, "id", "a stage");
  const std::string owner = "stage '" + def.id + "'";
  if (!is_identifier(def.id)) {
    fail(stage.find("id")->loc, "stage id '" + def.id + "' must match [a-z0-9_-]+");
  }
  for (size_t i = 0; i < stage.entries.size(); ++i) {
    const std::string& key = stage.entries[i].first;
    if (std::find(kStageKeys.begin(), kStageKeys.end(), key) == kStageKeys.end())
      fail(stage.key_locs[i], "unknown key '" + key + "' in " + owner + suggest(key, kStageKeys));
  }
  if (!stage.find("kind")) {
    fail(stage.loc, "missing required key 'kind' in " + owner +
                        " (one of: " + join(schema.stage_kinds()) + ")");
  }
  def.kind = scalar_of(stage, "kind", owner);
  const auto* specs = schema.stage_kind(def.kind);
  if (!specs) {
    fail(stage.find("kind")->loc, "unknown stage kind '" + def.kind + "' in " + owner +
                                      suggest(def.kind, schema.stage_kinds()));
  }

  if (const Node* needs = stage.find("needs"); needs && !needs->is_null()) {
    if (!needs->is_seq())
      fail(needs->loc,
           "'needs' in " + owner + " must be a list of stage ids, not " + needs->describe());
    for (const auto& item : needs->items) {
      if (!item.is_scalar())
        fail(item.loc, "'needs' in " + owner + " must list stage ids, not " + item.describe());
      def.needs.emplace_back(item.text, item.loc);
    }
  }

  const Node* params = stage.find("params");
  def.params = params ? *params : Node();
  if (!params) def.params.loc = stage.loc;
  if (!def.params.is_map() && !def.params.is_null()) {
    fail(def.params.loc, "'params' in " + owner + " must be a map, not " + def.params.describe());
  }

  if (const Node* when = stage.find("when")) {
    check_condition(*when, owner);
    def.when = *when;
  }

  const Node* matrix = stage.find("matrix");
  if (!matrix || matrix->is_null()) return def;
  if (!matrix->is_map())
    fail(matrix->loc, "'matrix' in " + owner + " must map parameters to lists of values");
  std::vector<std::string> names;
  for (const auto& spec : *specs) names.push_back(spec.name);
  for (size_t i = 0; i < matrix->entries.size(); ++i) {
    const auto& [key, values] = matrix->entries[i];
    const Loc& key_loc = matrix->key_locs[i];
    const std::vector<std::string> path = split_path(key);
    if (std::find(names.begin(), names.end(), path[0]) == names.end())
      fail(key_loc,
           "unknown parameter '" + path[0] + "' in matrix of " + owner + suggest(path[0], names));
    if (!values.is_seq() || values.items.empty()) {
      fail(values.loc, "matrix entry '" + key + "' of " + owner +
                           " must be a non-empty list of values, not " + values.describe());
    }
    const Node* set = &def.params;
    for (size_t p = 0; p < path.size() && set; ++p) set = set->find(path[p]);
    if (set) {
      fail(key_loc, "'" + key + "' of " + owner +
                        " is both in params and in matrix (keep one; an " +
                        "override of either replaces the other)");
    }
    def.matrix.push_back(matrix->entries[i]);
  }
  std::sort(def.matrix.begin(), def.matrix.end(),
            [](const Entry& a, const Entry& b) { return a.first < b.first; });
  return def;
}

// Text of a matrix value inside an instance id: strings bare, anything else as JSON. The id
// names the stage's folder in the run directory, so a '/' (a value like "../../x" would put
// the folder outside the run) and control characters become '_'.
std::string id_text(const nlohmann::json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  for (char& c : text)
    if (c == '/' || static_cast<unsigned char>(c) < 0x20) c = '_';
  return text;
}

// Instances a stage's matrix may make: each is a training or scoring run of its own, so a sweep
// beyond this is a mistake (a list repeated by an alias, a misplaced range), not a study.
constexpr size_t kMaxInstances = 10'000;

std::vector<StageInstance> expand(const StageDef& def, const Schema& schema) {
  const auto& specs = *schema.stage_kind(def.kind);
  const std::string owner = "params of stage '" + def.id + "'";
  size_t count = 1;
  for (const auto& [key, values] : def.matrix) {
    count *= std::max<size_t>(values.items.size(), 1);
    if (count > kMaxInstances)
      fail(def.loc, "the matrix of stage '" + def.id + "' makes more than " +
                        std::to_string(kMaxInstances) +
                        " instances; sweep fewer values, or split the study into workflows");
  }
  std::vector<StageInstance> out;
  std::unordered_set<std::string> ids;
  std::vector<size_t> pick(def.matrix.size(), 0);  // an odometer, last key fastest
  while (true) {
    Node params = def.params.is_null() ? Node::map_at(def.params.loc) : def.params;
    for (size_t k = 0; k < def.matrix.size(); ++k) {
      const Node& value = def.matrix[k].second.items[pick[k]];
      set_path(params, split_path(def.matrix[k].first), value, value.loc);
    }
    StageInstance instance;
    instance.id = def.id;
    instance.base_id = def.id;
    instance.kind = def.kind;
    instance.params = check_params(params, specs, owner, schema);
    instance.matrix_values = nlohmann::json::object();
    instance.file = def.loc.file;
    instance.line = def.loc.line;
    instance.column = def.loc.column;
    std::vector<std::string> labels;
    for (const auto& [key, values] : def.matrix) {
      std::string pointer;
      for (const auto& part : split_path(key)) pointer += "/" + part;
      const nlohmann::json& value = instance.params.at(nlohmann::json::json_pointer(pointer));
      instance.matrix_values[key] = value;
      labels.push_back(key + "=" + id_text(value));
    }
    if (!labels.empty()) instance.id += "[" + join(labels, ",") + "]";
    if (!ids.insert(instance.id).second)
      fail(def.loc, "matrix of stage '" + def.id + "' gives instance '" + instance.id +
                        "' twice (remove the repeated value)");
    out.push_back(std::move(instance));
    size_t k = def.matrix.size();
    while (k > 0 && ++pick[k - 1] == def.matrix[k - 1].second.items.size()) pick[--k] = 0;
    if (k == 0) return out;
  }
}

}  // namespace

std::vector<StageInstance> build_stages(const Node& stages, const Schema& schema,
                                        std::vector<LeftOutStage>* left_out) {
  std::vector<StageDef> defs;
  std::map<std::string, size_t> index;
  for (const auto& stage : stages.items) {
    StageDef def = parse_stage(stage, schema);
    if (index.count(def.id)) {
      fail(stage.find("id")->loc, "duplicate stage id '" + def.id + "' (first at " +
                                      defs[index[def.id]].loc.str() + "; ids must be unique)");
    }
    index[def.id] = defs.size();
    defs.push_back(std::move(def));
  }
  std::vector<std::string> ids;
  for (const auto& def : defs) ids.push_back(def.id);
  std::vector<DagStage> dag;
  for (const auto& def : defs) {
    DagStage node{def.id, {}};
    for (const auto& [need, loc] : def.needs) {
      if (!index.count(need))
        fail(loc, "unknown stage '" + need + "' in needs of stage '" + def.id + "'" +
                      suggest(need, ids));
      node.needs.push_back({index[need], loc});
    }
    dag.push_back(std::move(node));
  }
  const std::vector<size_t> order = topological_order(dag);

  // Stages whose condition does not hold are left out, and so is every stage that needs one.
  std::vector<bool> kept(defs.size(), true);
  for (size_t i : order) {
    std::string reason;
    for (const auto& edge : dag[i].needs)
      if (!kept[edge.target] && reason.empty())
        reason = "needs stage '" + defs[edge.target].id + "', which is left out";
    if (reason.empty() && defs[i].when)
      reason = unmet_condition(*defs[i].when, "stage '" + defs[i].id + "'");
    if (reason.empty()) continue;
    kept[i] = false;
    if (left_out) left_out->push_back({defs[i].id, reason});
  }

  // Left-out stages are expanded too, so their params are checked like every other stage's.
  std::vector<std::vector<StageInstance>> instances(defs.size());
  for (size_t i = 0; i < defs.size(); ++i) instances[i] = expand(defs[i], schema);
  std::vector<StageInstance> out;
  for (size_t i : order) {
    if (!kept[i]) continue;
    std::vector<std::string> needs;
    std::unordered_set<std::string> listed;
    for (const auto& edge : dag[i].needs)
      for (const auto& needed : instances[edge.target])
        if (listed.insert(needed.id).second) needs.push_back(needed.id);
    for (const auto& instance : instances[i]) {
      out.push_back(instance);
      out.back().needs = needs;
    }
  }
  return out;
}

}  // namespace hlm::workflow::detail
