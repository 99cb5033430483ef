// Substitution of ${vars.x} / ${env.X}. Vars are resolved lazily with a stack, so vars may refer
// to each other in any order and a cycle is reported with its path.
#include "workflow/interpolate.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <unordered_map>

#include "hlm/util.h"
#include "workflow/overrides.h"

namespace hlm::workflow::detail {

namespace {

const std::string kHelp = " (write ${vars.<name>} or ${env.<NAME>}; $${ is a literal ${)";

class Interpolator {
 public:
  // already_resolved: vars hold no references any more (only literal "${" from "$${").
  Interpolator(Node& vars, bool already_resolved) : vars_(vars) {
    for (auto& [name, node] : vars_.entries) {
      by_name_[name] = &node;
      state_[name] = already_resolved ? 2 : 0;
    }
  }

  // Resolves every var; after this, lookups need no further work.
  void resolve_all() {
    for (const auto& name : vars_.keys()) resolve_var(name, vars_.loc);
  }

  void walk(Node& node) {
    if (node.is_scalar()) return substitute(node);
    for (auto& item : node.items) walk(item);
    for (auto& entry : node.entries) walk(entry.second);
  }

 private:
  void resolve_var(const std::string& name, const Loc& from) {
    int& state = state_[name];
    if (state == 2) return;
    if (state == 1) {
      std::string cycle;
      auto start = std::find(stack_.begin(), stack_.end(), name);
      for (auto it = start; it != stack_.end(); ++it) cycle += *it + " -> ";
      fail(from, "cycle in vars: " + cycle + name + " (a var cannot refer to itself)");
    }
    state = 1;
    stack_.push_back(name);
    walk(*by_name_.at(name));
    stack_.pop_back();
    state_[name] = 2;
  }

  // The node a "vars.a.b" reference points at (path without the "vars." prefix).
  const Node& lookup(const std::string& path, const Loc& at) {
    const std::vector<std::string> parts = split_path(path);
    const auto var = by_name_.find(parts[0]);
    if (var == by_name_.end()) {
      fail(at, "unknown var '" + parts[0] + "' in ${vars." + path + "}" +
                   suggest(parts[0], vars_.keys()));
    }
    resolve_var(parts[0], at);
    const Node* node = var->second;
    for (size_t i = 1; i < parts.size(); ++i) {
      const Node* next = nullptr;
      long long index = 0;
      if (node->is_map()) {
        next = node->find(parts[i]);
      } else if (node->is_seq() && parse_int(parts[i], &index) && index >= 0 &&
                 static_cast<size_t>(index) < node->items.size()) {
        next = &node->items[static_cast<size_t>(index)];
      }
      if (!next) {
        fail(at, "${vars." + path + "}: '" + parts[i] + "' not found in " + node->describe() +
                     (node->is_map() ? suggest(parts[i], node->keys()) : ""));
      }
      node = next;
    }
    return *node;
  }

  static std::string env_value(const std::string& name, const Loc& at) {
    static const std::regex kEnvName("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(name, kEnvName)) fail(at, "bad environment variable name '" + name + "'");
    const char* value = std::getenv(name.c_str());
    if (!value) {
      fail(at, "environment variable '" + name + "' is not set (export it, or override the " +
                   "value on the command line)");
    }
    return value;
  }

  // The '}' closing the "${" at `open`, past any nested "${...}"; npos when there is none.
  static size_t matching_close(const std::string& text, size_t open) {
    int depth = 0;
    for (size_t j = open; j < text.size(); ++j) {
      if (text.compare(j, 2, "${") == 0) {
        ++depth;
        ++j;
      } else if (text[j] == '}' && --depth == 0) {
        return j;
      }
    }
    return std::string::npos;
  }

  void substitute(Node& node) {
    const std::string& text = node.text;
    if (text.find('$') == std::string::npos) return;
    std::string out;
    bool whole = false;
    bool substituted = false;
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, 3, "$${") == 0) {
        out += "${";
        i += 3;
        continue;
      }
      if (text.compare(i, 2, "${") != 0) {
        out += text[i++];
        continue;
      }
      const size_t close = matching_close(text, i);
      if (close == std::string::npos) fail(node.loc, "unterminated '${' in '" + text + "'" + kHelp);
      std::string ref = text.substr(i + 2, close - i - 2);
      if (ref.find("${") != std::string::npos) {  // ${vars.grids.${vars.size}}: inner first
        Node inner = node;
        inner.text = ref;
        substitute(inner);
        if (!inner.is_scalar()) fail(node.loc, "'" + ref + "' does not name a var path");
        ref = inner.text;
      }
      whole = i == 0 && close == text.size() - 1;
      substituted = true;
      if (ref.compare(0, 5, "vars.") == 0 && ref.size() > 5) {
        const Node& value = lookup(ref.substr(5), node.loc);
        if (whole) {
          const Loc use_site = node.loc;
          node = value;  // keeps the var's type; children keep their own locations
          node.loc = use_site;
          return;
        }
        if (!value.is_scalar()) {
          fail(node.loc, "${" + ref + "} is " + value.describe() +
                             " and cannot be placed inside text (use it as the whole value)");
        }
        out += value.text;
      } else if (ref.compare(0, 4, "env.") == 0 && ref.size() > 4) {
        out += env_value(ref.substr(4), node.loc);
      } else {
        fail(node.loc, "unknown reference '${" + ref + "}'" + kHelp);
      }
      i = close + 1;
    }
    // Substituted text is typed like a plain scalar: `threads: "${env.N}"` may be an int.
    if (substituted) node.quoted = false;
    node.text = out;
  }

  Node& vars_;
  // The vars by name (the block's entries are not added or removed while it works), so a
  // lookup does not scan the block: resolving is linear in the number of vars.
  std::unordered_map<std::string, Node*> by_name_;
  std::unordered_map<std::string, int> state_;  // 0 unresolved, 1 resolving, 2 done
  std::vector<std::string> stack_;
};

}  // namespace

void resolve_vars(Node& vars) { Interpolator(vars, false).resolve_all(); }

void interpolate(Node& node, const Node& vars) {
  Node resolved = vars;  // the interpolator wants a mutable block; lookups only read it
  Interpolator(resolved, true).walk(node);
}

}  // namespace hlm::workflow::detail
