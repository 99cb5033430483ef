// Parsing and applying key=value overrides. Only the head of the path (stage id, top-level
// param, var) is checked here; everything below is checked by the normal validation.
#include "workflow/overrides.h"

#include <algorithm>

namespace hlm::workflow::detail {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out(1);
  for (char c : path) {
    if (c == '.') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

void set_path(Node& map, const std::vector<std::string>& path, Node value, const Loc& loc) {
  Node* node = &map;
  for (size_t i = 0; i < path.size(); ++i) {
    if (node->is_null()) node->kind = Node::Kind::Map;
    if (!node->is_map()) {
      std::vector<std::string> head(path.begin(), path.begin() + static_cast<long>(i));
      fail(loc, "'" + join(head, ".") + "' is " + node->describe() + ", not a block, so '" +
                    join(path, ".") + "' cannot be set");
    }
    if (i + 1 == path.size()) {
      node->set(path[i], std::move(value), loc);
      return;
    }
    Node* next = node->find(path[i]);
    if (!next) {
      next = &node->set(path[i], Node::map_at(loc), loc);
    }
    node = next;
  }
}

void erase_path(Node& map, const std::vector<std::string>& path) {
  Node* node = &map;
  for (size_t i = 0; i + 1 < path.size() && node; ++i) node = node->find(path[i]);
  if (node && node->is_map()) node->erase(path.back());
}

namespace {

Node* find_stage(Node& root, const std::string& id, std::vector<std::string>* ids) {
  Node* stages = root.find("stages");
  if (!stages || !stages->is_seq()) return nullptr;
  for (auto& stage : stages->items) {
    const Node* sid = stage.find("id");
    if (!sid || !sid->is_scalar()) continue;
    if (sid->text == id) return &stage;
    ids->push_back(sid->text);
  }
  return nullptr;
}

void apply_to_stage(Node& stage, std::vector<std::string> path, Node value, const Loc& at,
                    const Schema& schema) {
  const std::string id = stage.find("id")->text;
  if (path.size() > 1 && path[0] == "params") path.erase(path.begin());
  const bool to_matrix = path[0] == "matrix";
  if (to_matrix) path.erase(path.begin());
  if (path.empty())
    fail(at, "expected " + id + ".<param>=value or " + id + ".matrix.<param>=[...]");

  const Node* kind = stage.find("kind");
  const auto* specs = kind && kind->is_scalar() ? schema.stage_kind(kind->text) : nullptr;
  if (specs) {
    std::vector<std::string> names;
    for (const auto& spec : *specs) names.push_back(spec.name);
    if (std::find(names.begin(), names.end(), path[0]) == names.end()) {
      fail(at, "unknown parameter '" + path[0] + "' of stage '" + id + "' (kind " + kind->text +
                   ")" + suggest(path[0], names));
    }
  }

  // A value given both ways would be ambiguous: the override replaces the other one, so
  // "pretrain.threads=4" runs one instance even when the file sweeps threads.
  const std::string joined = join(path, ".");
  if (!stage.find("params")) stage.set("params", Node::map_at(at), at);
  if (!stage.find("matrix") && to_matrix) stage.set("matrix", Node::map_at(at), at);
  Node& params = *stage.find("params");
  Node* matrix = stage.find("matrix");
  if (to_matrix) {
    if (matrix->is_null()) matrix->kind = Node::Kind::Map;
    if (!matrix->is_map()) fail(at, "the matrix of stage '" + id + "' is not a map");
    erase_path(params, path);
    matrix->set(joined, std::move(value), at);
  } else {
    if (matrix && matrix->is_map()) matrix->erase(joined);
    set_path(params, path, std::move(value), at);
  }
}

}  // namespace

void apply_overrides(Node& root, const std::vector<std::string>& overrides, const Schema& schema) {
  for (const std::string& text : overrides) {
    const Loc at{"override '" + text + "'", 0, 0};
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      fail(at, "expected key=value (e.g. pretrain.threads=4 or vars.codes=[32,64])");
    }
    const std::vector<std::string> path = split_path(text.substr(0, eq));
    if (std::any_of(path.begin(), path.end(), [](const std::string& p) { return p.empty(); }))
      fail(at, "empty name in '" + text.substr(0, eq) + "'");
    Node value = parse_yaml(text.substr(eq + 1), at.file, false);
    const std::string& head = path[0];

    if (head == "name" && path.size() == 1) {
      root.set("name", std::move(value), at);
    } else if (head == "vars" && path.size() > 1) {
      Node* vars = root.find("vars");
      if (!vars || !vars->is_map() || vars->entries.empty())
        fail(at, "unknown var '" + path[1] + "' (the workflow defines no vars)");
      if (!vars->find(path[1]))
        fail(at, "unknown var '" + path[1] + "'" + suggest(path[1], vars->keys()));
      set_path(*vars, {path.begin() + 1, path.end()}, std::move(value), at);
    } else if ((head == "settings" || head == "runner") && path.size() == 2) {
      if (!root.find(head)) root.set(head, Node::map_at(at), at);
      set_path(*root.find(head), {path[1]}, std::move(value), at);
    } else if (head == "vars" || head == "settings" || head == "runner" || head == "name") {
      fail(at, "expected " + std::string(head == "name" ? "name=value" : head + ".<key>=value"));
    } else {
      std::vector<std::string> ids;
      Node* stage = find_stage(root, head, &ids);
      if (!stage) {
        ids.insert(ids.end(), {"vars", "settings", "runner", "name"});
        fail(at, "unknown stage '" + head + "'" + suggest(head, ids));
      }
      if (path.size() < 2) fail(at, "expected " + head + ".<param>=value");
      apply_to_stage(*stage, {path.begin() + 1, path.end()}, std::move(value), at, schema);
    }
  }
}

}  // namespace hlm::workflow::detail
