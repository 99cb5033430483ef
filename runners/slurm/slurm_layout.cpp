// SLURM host lists and task counts (see slurm_layout.h).
#include "slurm/slurm_layout.h"

#include <cctype>
#include <cstdlib>

#include "hlm/errors.h"

namespace hlm {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string padded(long value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// The values of one bracket group's body, e.g. "01-04,07" -> 01 02 03 04 07.
std::vector<std::string> expand_ranges(const std::string& body, const std::string& list) {
  std::vector<std::string> values;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t comma = std::min(body.find(',', start), body.size());
    const std::string item = body.substr(start, comma - start);
    const size_t dash = item.find('-');
    const std::string first = item.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : item.substr(dash + 1);
    if (!all_digits(first) || !all_digits(last))
      throw ConfigError("host list '{}': '{}' is not a number or a range like 01-04", list, item);
    const long from = std::strtol(first.c_str(), nullptr, 10);
    const long to = std::strtol(last.c_str(), nullptr, 10);
    if (to < from)
      throw ConfigError("host list '{}': the range '{}' ends before it starts", list, item);
    for (long v = from; v <= to; ++v) values.push_back(padded(v, first.size()));
    start = comma + 1;
  }
  return values;
}

// One host expression without top-level commas, e.g. "r[1-2]-n[1-2]".
std::vector<std::string> expand_host(const std::string& host, const std::string& list) {
  std::vector<std::string> names{""};
  size_t at = 0;
  while (at < host.size()) {
    const size_t open = host.find('[', at);
    const std::string text = host.substr(at, open - at);
    for (auto& name : names) name += text;
    if (open == std::string::npos) break;
    const size_t close = host.find(']', open);
    if (close == std::string::npos) throw ConfigError("host list '{}': '[' without ']'", list);
    std::vector<std::string> grown;
    for (const auto& name : names)
      for (const auto& value : expand_ranges(host.substr(open + 1, close - open - 1), list))
        grown.push_back(name + value);
    names = std::move(grown);
    at = close + 1;
  }
  return names;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> hosts;
  size_t start = 0, depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 0) throw ConfigError("host list '{}': ']' without '['", list);
      --depth;
    }
    if (c != ',' || depth > 0) continue;
    const std::string host = list.substr(start, i - start);
    if (host.empty()) throw ConfigError("host list '{}' names an empty host", list);
    for (auto& name : expand_host(host, list)) hosts.push_back(std::move(name));
    start = i + 1;
  }
  if (depth > 0) throw ConfigError("host list '{}': '[' without ']'", list);
  return hosts;
}

std::vector<int> expand_tasks_per_node(const std::string& value) {
  std::vector<int> counts;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = std::min(value.find(',', start), value.size());
    const std::string item = value.substr(start, comma - start);
    const size_t paren = item.find("(x");
    const std::string count = item.substr(0, paren);
    std::string repeat = "1";
    if (paren != std::string::npos) {
      if (item.back() != ')')
        throw ConfigError("SLURM_TASKS_PER_NODE='{}': '{}' lacks its ')'", value, item);
      repeat = item.substr(paren + 2, item.size() - paren - 3);
    }
    if (!all_digits(count) || !all_digits(repeat))
      throw ConfigError("SLURM_TASKS_PER_NODE='{}': '{}' is not of the form N or N(xM)", value,
                        item);
    for (long r = 0; r < std::strtol(repeat.c_str(), nullptr, 10); ++r)
      counts.push_back(int(std::strtol(count.c_str(), nullptr, 10)));
    start = comma + 1;
  }
  return counts;
}

}  // namespace hlm
