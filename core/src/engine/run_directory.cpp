// Run directory files and the stage cache index (see run_directory.h).
#include "engine/run_directory.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlm/errors.h"
#include "hlm/util.h"
#include "util/atomic_file.h"

namespace fs = std::filesystem;

namespace hlm {

std::string new_run_directory(const std::string& runs_dir, const std::string& workflow_name,
                              const std::string& content) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
  const std::string base =
      runs_dir + "/" + workflow_name + "/" + stamp + "-" + hex64(fnv1a64(content)).substr(0, 8);
  fs::create_directories(fs::path(base).parent_path());
  // mkdir claims the name atomically: two runs started in the same second get two folders.
  // Owner-only: a run holds its records' tokens, weights and logs.
  std::string dir = base;
  for (int n = 2; ::mkdir(dir.c_str(), 0700) != 0; ++n) {
    if (errno != EEXIST)
      throw Error("cannot create run directory {}: {}; check that {} is writable", dir,
                  std::strerror(errno), runs_dir);
    dir = base + "." + std::to_string(n);
  }
  return fs::absolute(dir).lexically_normal().string();
}

void check_run_directory(const std::string& run_dir) {
  const std::string path = run_dir + "/workflow.resolved.yaml";
  if (!fs::exists(path))
    throw ConfigError(
        "{}: not a run directory (no workflow.resolved.yaml); give the folder that `hlm run` "
        "printed as its run directory",
        run_dir);
  try {
    const YAML::Node resolved = YAML::LoadFile(path);
    if (!resolved.IsMap() || !resolved["stages"])
      throw ConfigError("{}: corrupt (not a workflow with stages)", path);
  } catch (const YAML::Exception& e) {
    throw ConfigError("{}: corrupt, not valid YAML ({})", path, e.what());
  }
}

static std::string manifest_checksum(const nlohmann::json& manifest_without_checksum) {
  return hex64(fnv1a64(manifest_without_checksum.dump()));
}

void write_manifest(const std::string& stage_dir, nlohmann::json manifest) {
  manifest.erase("checksum");
  manifest["checksum"] = manifest_checksum(manifest);
  write_file_atomic(stage_dir + "/manifest.json", manifest.dump(2));
}

std::optional<nlohmann::json> read_manifest(const std::string& stage_dir) {
  const std::string path = stage_dir + "/manifest.json";
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const std::string what_to_do =
      "delete the folder " + stage_dir + " to run the stage again (hlm run --resume reruns it)";
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error("{}: not a valid manifest, truncated or corrupt ({}); {}", path, e.what(),
                what_to_do);
  }
  if (!manifest.is_object())
    throw Error("{}: not a valid manifest (not a JSON object); {}", path, what_to_do);
  if (!manifest.contains("checksum")) return manifest;
  const nlohmann::json stored = manifest["checksum"];
  manifest.erase("checksum");
  if (!stored.is_string() || stored.get<std::string>() != manifest_checksum(manifest))
    throw Error("{}: checksum mismatch (the file is corrupt, its results cannot be trusted); {}",
                path, what_to_do);
  return manifest;
}

static bool artifacts_exist(const nlohmann::json& artifacts) {
  for (const auto& [name, path] : artifacts.items()) {
    if (!path.is_string()) continue;
    const std::string p = path;
    // A classifier is a prefix of two files (.model, .head).
    if (!fs::exists(p) && !fs::exists(p + ".model")) return false;
  }
  return true;
}

std::optional<std::string> cached_stage_dir(const std::string& runs_dir, const std::string& key) {
  std::ifstream in(runs_dir + "/.cache/" + key);
  std::string dir;
  if (!in || !std::getline(in, dir)) return std::nullopt;
  std::optional<nlohmann::json> manifest;
  try {
    manifest = read_manifest(dir);
  } catch (const Error& e) {
    spdlog::warn("stage cache: not reusing {}: {}", dir, e.what());
    return std::nullopt;
  }
  if (!manifest || manifest->value("status", "") != "done" ||
      manifest->value("cache_key", "") != key ||
      !artifacts_exist(manifest->value("artifacts", nlohmann::json::object())))
    return std::nullopt;
  return dir;
}

void remember_stage(const std::string& runs_dir, const std::string& key,
                    const std::string& stage_dir) {
  fs::create_directories(runs_dir + "/.cache");
  write_file_atomic(runs_dir + "/.cache/" + key, stage_dir + "\n");
}

}  // namespace hlm
