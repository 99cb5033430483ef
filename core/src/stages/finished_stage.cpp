// Stages of other runs (see finished_stage.h).
#include "stages/finished_stage.h"

#include <filesystem>
#include <vector>

#include "engine/run_directory.h"
#include "hlm/errors.h"

namespace hlm {

namespace fs = std::filesystem;

namespace {

// The stage folders a path may mean: itself, else its subfolders holding a manifest.
std::vector<fs::path> candidate_stages(const fs::path& path) {
  if (fs::exists(path / "manifest.json")) return {path};
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "manifest.json"))
      found.push_back(entry.path());
  return found;
}

}  // namespace

nlohmann::json finished_stage(const std::string& path, const std::string& kind,
                              const std::string& param) {
  return finished_stage(path, kind, param, nullptr, "");
}

nlohmann::json finished_stage(const std::string& path, const std::string& kind,
                              const std::string& param, const StageChoice& chosen,
                              const std::string& which) {
  const std::string what =
      "; give the folder of a finished " + kind + " stage, or the run folder holding it";
  if (!fs::is_directory(path)) throw ConfigError("{}: '{}' is no folder{}", param, path, what);
  std::vector<nlohmann::json> matches;
  for (const fs::path& dir : candidate_stages(path)) {
    auto manifest = read_manifest(dir.string());
    if (!manifest || manifest->value("kind", "") != kind) continue;
    if (chosen && !chosen(*manifest)) continue;
    (*manifest)["dir"] = fs::absolute(dir).lexically_normal().string();
    matches.push_back(*manifest);
  }
  const std::string with = which.empty() ? "" : " " + which;
  if (matches.empty())
    throw ConfigError("{}: '{}' holds no {} stage{}{}", param, path, kind, with, what);
  if (matches.size() > 1)
    throw ConfigError("{}: '{}' holds {} {} stages{}; name the stage's own folder", param, path,
                      matches.size(), kind, with);
  const nlohmann::json& m = matches.front();
  if (m.value("status", "") != "done")
    throw ConfigError(
        "{}: the {} stage in '{}' did not finish (status {}); finish that run (hlm "
        "run --resume) or name another",
        param, kind, m.at("dir").get<std::string>(), m.value("status", "unknown"));
  return m;
}

std::string other_run(const nlohmann::json& params, const std::string& key) {
  const std::string value = params.value(key, std::string());
  return value == "own" ? std::string() : value;
}

std::string file_fingerprint(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return "missing";
  const auto time = fs::last_write_time(path, ec).time_since_epoch().count();
  return std::to_string(size) + "@" + std::to_string(time);
}

}  // namespace hlm
