// Parameter type checks: every value is converted to the JSON type its declaration names, so
// `lr: 1` and `lr: 1.0` give the same resolved value (and the same cache key).
#include "workflow/params.h"

#include <algorithm>
#include <optional>

#include "hlm/util.h"

namespace hlm::workflow::detail {

namespace {

const char* const kPluginPrefix = "plugin:";
const char* const kListPrefix = "list:";
// "choice:a|b|c": a string that must be one of the listed words.
const char* const kChoicePrefix = "choice:";

std::vector<std::string> choices_of(const std::string& type) {
  std::vector<std::string> out;
  std::string word;
  for (char c : type.substr(std::string(kChoicePrefix).size()) + "|") {
    if (c != '|') {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The interval of a number type: "int[1,]" (1 or more), "float(0,]" (above 0),
// "float[0,1)", "int[1,65536]"; a missing bound is open-ended.
struct Range {
  std::string base;  // "int" or "float"
  std::optional<double> lo, hi;
  bool lo_open = false, hi_open = false;
};

std::optional<Range> range_of(const std::string& type) {
  const size_t open = type.find_first_of("[(");
  if (open == std::string::npos) return std::nullopt;
  Range r;
  r.base = type.substr(0, open);
  const size_t comma = type.find(',', open);
  const char close = type.back();
  if ((r.base != "int" && r.base != "float") || comma == std::string::npos ||
      (close != ']' && close != ')'))
    return std::nullopt;
  r.lo_open = type[open] == '(';
  r.hi_open = close == ')';
  const std::string lo = type.substr(open + 1, comma - open - 1);
  const std::string hi = type.substr(comma + 1, type.size() - comma - 2);
  double v = 0;
  if (!lo.empty() && !parse_float(lo, &v)) return std::nullopt;
  if (!lo.empty()) r.lo = v;
  if (!hi.empty() && !parse_float(hi, &v)) return std::nullopt;
  if (!hi.empty()) r.hi = v;
  return r;
}

std::string number_text(double v) {
  std::string s = nlohmann::json(v).dump();
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// "1 or more", "more than 0", "0 up to (not including) 1", "1 to 65536".
std::string describe(const Range& r) {
  const std::string lo = r.lo ? number_text(*r.lo) : "", hi = r.hi ? number_text(*r.hi) : "";
  if (r.lo && !r.hi) return r.lo_open ? "more than " + lo : lo + " or more";
  if (!r.lo && r.hi) return r.hi_open ? "less than " + hi : hi + " or less";
  if (!r.lo) return "any number";
  return (r.lo_open ? "more than " + lo + " and " : lo + " ") +
         (r.hi_open ? "up to (not including) " + hi : "to " + hi);
}

bool within(const Range& r, double v) {
  if (r.lo && (r.lo_open ? !(v > *r.lo) : !(v >= *r.lo))) return false;
  if (r.hi && (r.hi_open ? !(v < *r.hi) : !(v <= *r.hi))) return false;
  return true;
}

[[noreturn]] void wrong_type(const Node& v, const std::string& what, const std::string& expected,
                             const std::string& hint = "") {
  std::string got = v.describe();
  if (v.is_scalar() && v.quoted) got += " (a quoted string)";
  fail(v.loc, "wrong type for " + what + ": expected " + expected + ", got " + got + hint);
}

// A transformer block (a plugin declaring hlm/transformer.h's HLM_TRANSFORMER_PARAMS) splits
// d_model among its n_head heads evenly: checked here, not when its stage starts.
void check_attention_heads(const nlohmann::json& params, const Node& block,
                           const std::string& what) {
  if (!params.contains("d_model") || !params.contains("n_head") ||
      !params["d_model"].is_number_integer() || !params["n_head"].is_number_integer())
    return;
  const long long d_model = params["d_model"], heads = params["n_head"];
  if (heads > 0 && d_model % heads != 0) {
    const Node* at = block.find("n_head") ? block.find("n_head") : block.find("d_model");
    fail(at ? at->loc : block.loc, what + ": d_model " + std::to_string(d_model) +
                                       " is not divisible by n_head " + std::to_string(heads) +
                                       " (each head takes d_model / n_head dimensions); pick " +
                                       "n_head among the divisors of d_model");
  }
}

nlohmann::json check_plugin_block(const Node& v, const std::string& kind, const std::string& what,
                                  const Schema& schema) {
  const std::vector<std::string> names = schema.plugin_names(kind);
  const std::string expected = "a block {plugin: <" + kind + " plugin>, ...}";
  if (!v.is_map()) {
    wrong_type(v, what, expected,
               names.empty() ? "" : " (" + kind + " plugins: " + join(names) + ")");
  }
  const Node* name_node = v.find("plugin");
  if (!name_node) {
    fail(v.loc, "missing key 'plugin' in " + what + " (expected one of: " + join(names) + ")");
  }
  if (!name_node->is_scalar()) wrong_type(*name_node, "'plugin' in " + what, "a plugin name");
  const std::string name = name_node->text;
  const std::vector<ParamSpec>* specs = schema.plugin(kind, name);
  if (!specs) {
    fail(name_node->loc, "unknown " + kind + " plugin '" + name + "' in " + what +
                             suggest(name, names) + schema.refused_note());
  }
  Node rest = v;
  rest.erase("plugin");
  nlohmann::json out =
      check_params(rest, *specs, what + " (" + kind + " plugin '" + name + "')", schema);
  check_attention_heads(out, v, what);
  out["plugin"] = name;
  return out;
}

}  // namespace

bool is_valid_type(const std::string& type) {
  if (type == "int" || type == "float" || type == "bool" || type == "string" || type == "list" ||
      type == "map") {
    return true;
  }
  if (starts_with(type, kPluginPrefix)) return type.size() > std::string(kPluginPrefix).size();
  if (starts_with(type, kListPrefix)) return is_valid_type(type.substr(5));
  if (starts_with(type, kChoicePrefix)) return !choices_of(type).empty();
  return range_of(type).has_value();
}

nlohmann::json default_of(const ParamSpec& spec, const Loc& loc) {
  if (spec.required || spec.default_json.empty()) return nullptr;
  try {
    return nlohmann::json::parse(spec.default_json);
  } catch (const nlohmann::json::exception&) {
    fail(loc, "the default of '" + spec.name + "' is not valid JSON: " + spec.default_json +
                  " (fix the parameter declaration)");
  }
}

nlohmann::json check_value(const Node& v, const std::string& type, const std::string& what,
                           const Schema& schema) {
  if (starts_with(type, kPluginPrefix)) {
    return check_plugin_block(v, type.substr(std::string(kPluginPrefix).size()), what, schema);
  }
  if (type == "map") {
    if (!v.is_map()) wrong_type(v, what, "a map");
    return to_json(v);
  }
  if (type == "list" || starts_with(type, kListPrefix)) {
    if (!v.is_seq()) wrong_type(v, what, "a list", " (write [a, b] or one '- item' per line)");
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < v.items.size(); ++i) {
      const Node& item = v.items[i];
      const std::string item_what = what + " item " + std::to_string(i + 1);
      if (type == "list") {
        if (!item.is_scalar()) wrong_type(item, item_what, "a string or number");
        out.push_back(to_json(item));
      } else {
        out.push_back(
            check_value(item, type.substr(std::string(kListPrefix).size()), item_what, schema));
      }
    }
    return out;
  }
  if (const auto range = range_of(type)) {
    const nlohmann::json value = check_value(v, range->base, what, schema);
    if (!within(*range, value.get<double>()))
      fail(v.loc, what + " is " + v.text + ", out of its range: allowed " + describe(*range));
    return value;
  }
  if (starts_with(type, kChoicePrefix)) {
    const auto choices = choices_of(type);
    std::string listed;
    for (const auto& c : choices) listed += (listed.empty() ? "" : ", ") + c;
    if (!v.is_scalar() || std::find(choices.begin(), choices.end(), v.text) == choices.end())
      wrong_type(v, what, "one of " + listed);
    return v.text;
  }
  if (!v.is_scalar()) wrong_type(v, what, type == "int" ? "an int" : "a " + type);
  if (type == "string") return v.text;
  if (!v.quoted) {
    long long i = 0;
    double f = 0;
    bool b = false;
    if (type == "int" && parse_int(v.text, &i)) return i;
    if (type == "float" && parse_float(v.text, &f)) return f;
    if (type == "bool" && parse_bool(v.text, &b)) return b;
  }
  if (type == "int") wrong_type(v, what, "an int");
  if (type == "float") wrong_type(v, what, "a float");
  wrong_type(v, what, "a bool", " (write true or false)");
}

nlohmann::json check_params(const Node& params, const std::vector<ParamSpec>& specs,
                            const std::string& owner, const Schema& schema) {
  if (!params.is_map() && !params.is_null()) wrong_type(params, owner, "a map of parameters");
  std::vector<std::string> names;
  for (const auto& spec : specs) names.push_back(spec.name);
  for (size_t i = 0; i < params.entries.size(); ++i) {
    const std::string& key = params.entries[i].first;
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      fail(params.key_locs[i], "unknown key '" + key + "' in " + owner + suggest(key, names));
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& spec : specs) {
    const std::string what = "'" + spec.name + "' in " + owner;
    if (const Node* v = params.find(spec.name)) {
      const nlohmann::json fallback = default_of(spec, v->loc);
      // A parameter whose default is null may be set to null explicitly.
      if (v->is_null() && !spec.required && fallback.is_null()) {
        out[spec.name] = nullptr;
      } else if (v->is_map() && !v->find("plugin") && starts_with(spec.type, kPluginPrefix) &&
                 fallback.is_object() && fallback.contains("plugin")) {
        // A block that only changes parameters ("model.layers=4") keeps the default plugin.
        Node block = *v;
        block.set("plugin", from_json(fallback["plugin"], v->loc), v->loc);
        out[spec.name] = check_value(block, spec.type, what, schema);
      } else {
        out[spec.name] = check_value(*v, spec.type, what, schema);
      }
      continue;
    }
    if (spec.required) {
      const std::string help = spec.help.empty() ? spec.type : spec.help;
      fail(params.loc, "missing required key '" + spec.name + "' in " + owner + " (" + help + ")");
    }
    const nlohmann::json fallback = default_of(spec, params.loc);
    // Defaults go through the same checks, so a plugin block default gets its own defaults.
    out[spec.name] = fallback.is_null() ? nlohmann::json(nullptr)
                                        : check_value(from_json(fallback, params.loc), spec.type,
                                                      what + " (its default)", schema);
  }
  return out;
}

}  // namespace hlm::workflow::detail
