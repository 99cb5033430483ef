// Stage conditions (see conditions.h).
#include "workflow/conditions.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace hlm::workflow::detail {

namespace {

const std::vector<std::string> kConditions = {"files_exist"};
const std::vector<std::string> kFilesExistKeys = {"dir", "names", "suffix"};

// The names of files_exist: one name or a list of names.
std::vector<std::string> names_of(const Node& names, const std::string& owner) {
  if (names.is_scalar()) return {names.text};
  if (!names.is_seq())
    fail(names.loc, "when.files_exist.names of " + owner +
                        " must be a name or a list of names, not " + names.describe());
  std::vector<std::string> out;
  for (const Node& item : names.items) {
    if (!item.is_scalar())
      fail(item.loc,
           "when.files_exist.names of " + owner + " must list names, not " + item.describe());
    out.push_back(item.text);
  }
  return out;
}

const Node& files_exist_of(const Node& when) { return *when.find("files_exist"); }

}  // namespace

void check_condition(const Node& when, const std::string& owner) {
  if (!when.is_map() || when.entries.empty())
    fail(when.loc, "'when' in " + owner + " must be a map of conditions (" + join(kConditions) +
                       "), not " + when.describe());
  for (size_t i = 0; i < when.entries.size(); ++i) {
    const std::string& key = when.entries[i].first;
    if (std::find(kConditions.begin(), kConditions.end(), key) == kConditions.end())
      fail(when.key_locs[i],
           "unknown condition '" + key + "' in 'when' of " + owner + suggest(key, kConditions));
  }
  const Node& files = files_exist_of(when);
  if (!files.is_map())
    fail(files.loc, "when.files_exist of " + owner + " must be a map {dir, names, suffix}, not " +
                        files.describe());
  for (size_t i = 0; i < files.entries.size(); ++i) {
    const std::string& key = files.entries[i].first;
    if (std::find(kFilesExistKeys.begin(), kFilesExistKeys.end(), key) == kFilesExistKeys.end())
      fail(files.key_locs[i], "unknown key '" + key + "' in when.files_exist of " + owner +
                                  suggest(key, kFilesExistKeys));
  }
  for (const char* key : {"dir", "names"})
    if (!files.find(key))
      fail(files.loc, std::string("when.files_exist of ") + owner + " needs '" + key + "'");
  for (const char* key : {"dir", "suffix"}) {
    const Node* value = files.find(key);
    if (value && !value->is_scalar() && !value->is_null())
      fail(value->loc, std::string("when.files_exist.") + key + " of " + owner +
                           " must be text, not " + value->describe());
  }
  names_of(*files.find("names"), owner);
}

std::string unmet_condition(const Node& when, const std::string& owner) {
  const Node& files = files_exist_of(when);
  const Node& dir_node = *files.find("dir");
  const std::string dir = dir_node.is_null() ? "" : dir_node.text;
  const Node* suffix_node = files.find("suffix");
  const std::string suffix = suffix_node && suffix_node->is_scalar() ? suffix_node->text : "";
  const std::vector<std::string> names = names_of(*files.find("names"), owner);
  if (dir.empty()) return "when.files_exist: no folder given (dir is empty)";
  if (names.empty()) return "when.files_exist: no file names given";
  std::vector<std::string> missing;
  for (const std::string& name : names)
    if (!std::filesystem::exists(std::filesystem::path(dir) / (name + suffix)))
      missing.push_back(name + suffix);
  if (missing.empty()) return "";
  if (missing.size() == names.size())
    return "when.files_exist: none of its " + std::to_string(names.size()) + " file(s) is in " +
           dir + " (first: " + missing.front() + ")";
  const std::vector<std::string> shown(missing.begin(),
                                       missing.begin() + std::min<size_t>(10, missing.size()));
  fail(files.loc, owner + " needs all of its " + std::to_string(names.size()) +
                      " files or none (when.files_exist); " + std::to_string(missing.size()) +
                      " missing from " + dir + ": " + join(shown) +
                      (missing.size() > shown.size() ? ", ..." : "") +
                      " (add them, or remove their names from the list the workflow gives)");
}

}  // namespace hlm::workflow::detail
