// Stage conditions (see conditions.h).
#include "workflow/conditions.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace hlm::workflow::detail {

namespace {

const std::vector<std::string> kConditions = {"files_exist"};
const std::vector<std::string> kFilesExistKeys = {"dir", "names", "suffix"};

// The names or suffixes of files_exist (`key`): one text or a list of texts.
std::vector<std::string> texts_of(const Node& node, const std::string& key,
                                  const std::string& owner) {
  if (node.is_scalar()) return {node.text};
  if (!node.is_seq())
    fail(node.loc, "when.files_exist." + key + " of " + owner + " must be a text or a list of " +
                       key + ", not " + node.describe());
  std::vector<std::string> out;
  for (const Node& item : node.items) {
    if (!item.is_scalar())
      fail(item.loc,
           "when.files_exist." + key + " of " + owner + " must list texts, not " + item.describe());
    out.push_back(item.text);
  }
  return out;
}

std::vector<std::string> names_of(const Node& names, const std::string& owner) {
  return texts_of(names, "names", owner);
}

// Every name takes each suffix; none given is the name alone. A list says that each record
// needs several files (beats and rhythm in two annotation files).
std::vector<std::string> suffixes_of(const Node* suffix, const std::string& owner) {
  if (!suffix || suffix->is_null()) return {""};
  return texts_of(*suffix, "suffix", owner);
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
  if (const Node* dir = files.find("dir"); dir && !dir->is_scalar() && !dir->is_null())
    fail(dir->loc, "when.files_exist.dir of " + owner + " must be text, not " + dir->describe());
  names_of(*files.find("names"), owner);
  suffixes_of(files.find("suffix"), owner);
}

std::string unmet_condition(const Node& when, const std::string& owner) {
  const Node& files = files_exist_of(when);
  const Node& dir_node = *files.find("dir");
  const std::string dir = dir_node.is_null() ? "" : dir_node.text;
  const std::vector<std::string> suffixes = suffixes_of(files.find("suffix"), owner);
  std::vector<std::string> names;
  for (const std::string& name : names_of(*files.find("names"), owner))
    for (const std::string& suffix : suffixes) names.push_back(name + suffix);
  if (dir.empty()) return "when.files_exist: no folder given (dir is empty)";
  if (names.empty()) return "when.files_exist: no file names given";
  std::vector<std::string> missing;
  for (const std::string& name : names)
    if (!std::filesystem::exists(std::filesystem::path(dir) / name)) missing.push_back(name);
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
