// The workflow layer's own YAML tree: every node and key keeps where it came from (file:line:col
// or an override), so overrides and interpolation can edit it and errors still point home.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace hlm::workflow::detail {

struct Loc {
  std::string file;  // a file path, or a label such as "override 'a.b=1'" with line 0
  int line = 0;      // 1-based; 0 when the origin has no lines
  int column = 0;
  std::string str() const;
};

// Throws hlm::ConfigError "LOC: message".
[[noreturn]] void fail(const Loc& loc, const std::string& message);

struct Node;
using Entry = std::pair<std::string, Node>;

struct Node {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  std::string text;            // scalar text
  bool quoted = false;         // quoted scalars are always strings
  std::vector<Node> items;     // sequence
  std::vector<Entry> entries;  // map, in file order
  std::vector<Loc> key_locs;   // map: where each key is, parallel to entries
  Loc loc;

  static Node map_at(const Loc& at) {
    Node n;
    n.kind = Kind::Map;
    n.loc = at;
    return n;
  }
  bool is_map() const { return kind == Kind::Map; }
  bool is_seq() const { return kind == Kind::Sequence; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_null() const { return kind == Kind::Null; }
  const Node* find(const std::string& key) const;
  Node* find(const std::string& key);
  const Loc& key_loc(const std::string& key) const;  // loc of the key itself (or the node's)
  // Adds or replaces key; new keys get key_loc.
  Node& set(const std::string& key, Node value, const Loc& key_loc);
  bool erase(const std::string& key);
  std::vector<std::string> keys() const;
  // "map", "list", "null" or "'text'", for messages.
  std::string describe() const;
};

// Parses YAML text (the first document). Syntax errors become ConfigError at their mark;
// duplicate keys and non-scalar keys are errors too. with_lines=false labels every node with
// `file` alone (for override values, whose lines mean nothing to the user).
Node parse_yaml(const std::string& text, const std::string& file, bool with_lines = true);
// A JSON value as a tree, every node at loc (for defaults).
Node from_json(const nlohmann::json& value, const Loc& loc);
// Untyped conversion: plain scalars become null, bool, int, float or string by YAML 1.2 core
// rules; quoted scalars stay strings.
nlohmann::json to_json(const Node& node);
// Scalar typing helpers shared with the parameter checks.
bool parse_int(const std::string& text, long long* out);
bool parse_float(const std::string& text, double* out);
bool parse_bool(const std::string& text, bool* out);
bool is_null_text(const std::string& text);
// True when `name` matches [a-z0-9_-]+.
bool is_identifier(const std::string& name);
// "a, b, c" for hints.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");
// did_you_mean, or " (expected one of: ...)" when nothing is close.
std::string suggest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace hlm::workflow::detail
