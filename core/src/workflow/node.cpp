// Converts yaml-cpp documents into the located tree of node.h and types plain scalars.
#include "workflow/node.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <regex>
#include <unordered_map>

#include "hlm/errors.h"
#include "hlm/util.h"

namespace hlm::workflow::detail {

std::string Loc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

void fail(const Loc& loc, const std::string& message) {
  throw ConfigError("{}: {}", loc.str(), message);
}

const Node* Node::find(const std::string& key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

Node* Node::find(const std::string& key) {
  return const_cast<Node*>(static_cast<const Node*>(this)->find(key));
}

const Loc& Node::key_loc(const std::string& key) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].first == key) return key_locs[i];
  return loc;
}

Node& Node::set(const std::string& key, Node value, const Loc& at) {
  if (Node* existing = find(key)) return *existing = std::move(value);
  entries.emplace_back(key, std::move(value));
  key_locs.push_back(at);
  return entries.back().second;
}

bool Node::erase(const std::string& key) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first != key) continue;
    entries.erase(entries.begin() + static_cast<long>(i));
    key_locs.erase(key_locs.begin() + static_cast<long>(i));
    return true;
  }
  return false;
}

std::vector<std::string> Node::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.first);
  return out;
}

std::string Node::describe() const {
  switch (kind) {
    case Kind::Null:
      return "null";
    case Kind::Sequence:
      return "a list";
    case Kind::Map:
      return "a map";
    case Kind::Scalar:
      break;
  }
  return "'" + text + "'";
}

namespace {

Loc loc_of(const YAML::Mark& mark, const std::string& file, bool with_lines, const Loc& parent) {
  if (!with_lines) return Loc{file, 0, 0};
  if (mark.is_null() || mark.line < 0) return parent;
  return Loc{file, mark.line + 1, mark.column + 1};
}

// Aliases are references in yaml-cpp's tree but copies in ours: a few lines of aliases of
// aliases would expand to billions of values. Far above any real workflow, far below memory.
constexpr size_t kMaxValues = 1'000'000;
constexpr int kMaxDepth = 64;

struct Budget {
  size_t values = 0;
  int depth = 0;
};

Node convert(const YAML::Node& y, const std::string& file, bool with_lines, const Loc& parent,
             Budget& budget) {
  Node n;
  n.loc = loc_of(y.Mark(), file, with_lines, parent);
  if (++budget.values > kMaxValues)
    fail(n.loc, "the workflow expands to more than " + std::to_string(kMaxValues) +
                    " values (aliases of aliases?); write it without nested *aliases");
  if (budget.depth >= kMaxDepth)
    fail(n.loc, "blocks nested more than " + std::to_string(kMaxDepth) + " deep");
  ++budget.depth;
  switch (y.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      n.kind = Node::Kind::Null;
      break;
    case YAML::NodeType::Scalar:
      n.kind = Node::Kind::Scalar;
      n.text = y.Scalar();
      // "!" is yaml-cpp's tag for quoted scalars; an explicit !!str means the same.
      n.quoted = y.Tag() == "!" || y.Tag() == "tag:yaml.org,2002:str";
      break;
    case YAML::NodeType::Sequence:
      n.kind = Node::Kind::Sequence;
      for (const auto& item : y) n.items.push_back(convert(item, file, with_lines, n.loc, budget));
      break;
    case YAML::NodeType::Map:
      n.kind = Node::Kind::Map;
      std::unordered_map<std::string, size_t> seen;  // key -> entry: linear in the map's size
      for (auto it = y.begin(); it != y.end(); ++it) {
        const Loc key_loc = loc_of(it->first.Mark(), file, with_lines, n.loc);
        if (!it->first.IsScalar()) fail(key_loc, "map keys must be plain names, not a list or map");
        const std::string key = it->first.Scalar();
        if (key == "<<" && it->first.Tag() != "!")
          fail(key_loc,
               "YAML merge keys (<<: *name) are not supported; write the keys out, or keep "
               "shared values in vars: and use them as ${name}");
        if (const auto first = seen.find(key); first != seen.end())
          fail(key_loc,
               "duplicate key '" + key + "' (first at " + n.key_locs[first->second].str() + ")");
        seen.emplace(key, n.entries.size());
        Node value = convert(it->second, file, with_lines, key_loc, budget);
        // An empty value ("params:") has the next token's mark; its key is where to point.
        if (value.is_null()) value.loc = key_loc;
        n.entries.emplace_back(key, std::move(value));
        n.key_locs.push_back(key_loc);
      }
      break;
  }
  --budget.depth;
  return n;
}

}  // namespace

Node parse_yaml(const std::string& text, const std::string& file, bool with_lines) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const Loc at = with_lines && !e.mark.is_null() ? Loc{file, e.mark.line + 1, e.mark.column + 1}
                                                   : Loc{file, 0, 0};
    fail(at, "YAML syntax error: " + e.msg + " (check indentation, quoting and brackets)");
  }
  Budget budget;
  return convert(doc, file, with_lines, Loc{file, with_lines ? 1 : 0, with_lines ? 1 : 0}, budget);
}

Node from_json(const nlohmann::json& value, const Loc& loc) {
  Node n;
  n.loc = loc;
  if (value.is_null()) {
    n.kind = Node::Kind::Null;
  } else if (value.is_array()) {
    n.kind = Node::Kind::Sequence;
    for (const auto& item : value) n.items.push_back(from_json(item, loc));
  } else if (value.is_object()) {
    n.kind = Node::Kind::Map;
    for (const auto& [k, v] : value.items()) n.set(k, from_json(v, loc), loc);
  } else {
    n.kind = Node::Kind::Scalar;
    n.quoted = value.is_string();
    n.text = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return n;
}

bool is_null_text(const std::string& t) {
  return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
}

bool parse_bool(const std::string& t, bool* out) {
  const bool is_true = t == "true" || t == "True" || t == "TRUE";
  const bool is_false = t == "false" || t == "False" || t == "FALSE";
  if (is_true || is_false) *out = is_true;
  return is_true || is_false;
}

bool parse_int(const std::string& t, long long* out) {
  static const std::regex kInt("[-+]?[0-9]+");
  if (!std::regex_match(t, kInt)) return false;
  errno = 0;
  *out = std::strtoll(t.c_str(), nullptr, 10);
  return errno != ERANGE;
}

bool parse_float(const std::string& t, double* out) {
  // Decimal forms only: strtod alone would also take "nan", "inf" and hex floats.
  static const std::regex kFloat("[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?");
  if (!std::regex_match(t, kFloat)) return false;
  errno = 0;
  *out = std::strtod(t.c_str(), nullptr);
  return errno != ERANGE;
}

nlohmann::json to_json(const Node& node) {
  switch (node.kind) {
    case Node::Kind::Null:
      return nullptr;
    case Node::Kind::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node.items) out.push_back(to_json(item));
      return out;
    }
    case Node::Kind::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, v] : node.entries) out[k] = to_json(v);
      return out;
    }
    case Node::Kind::Scalar:
      break;
  }
  if (node.quoted) return node.text;
  bool b = false;
  long long i = 0;
  double f = 0;
  if (is_null_text(node.text)) return nullptr;
  if (parse_bool(node.text, &b)) return b;
  if (parse_int(node.text, &i)) return i;
  if (parse_float(node.text, &f)) return f;
  return node.text;
}

bool is_identifier(const std::string& name) {
  static const std::regex kId("[a-z0-9_-]+");
  return std::regex_match(name, kId);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string suggest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string hint = did_you_mean(word, candidates);
  if (!hint.empty() || candidates.empty()) return hint;
  return " (expected one of: " + join(candidates) + ")";
}

}  // namespace hlm::workflow::detail
