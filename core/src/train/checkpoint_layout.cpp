// Checkpoint folders and the checks on what they hold (see checkpoint_layout.h).
#include "train/checkpoint_layout.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>

#include "hlm/errors.h"
#include "hlm/util.h"

namespace fs = std::filesystem;

namespace hlm {
namespace {

// fnv1a64 of a whole file, read in 1 MB pieces.
std::string file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("{}: cannot be read", path);
  std::vector<char> buffer(1 << 20);
  uint64_t hash = fnv1a64(nullptr, 0);  // the offset basis, then chained chunk by chunk
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    hash = fnv1a64(buffer.data(), size_t(in.gcount()), hash);
  }
  return hex64(hash);
}

}  // namespace

std::string checkpoint_step_dir(const std::string& dir, int64_t step) {
  return dir + "/step_" + std::to_string(step);
}

std::vector<int64_t> complete_checkpoint_steps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || !std::filesystem::exists(entry.path() / "DONE")) continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (*end == '\0') steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::string latest_checkpoint(const std::string& dir) {
  const std::vector<int64_t> steps = complete_checkpoint_steps(dir);
  return steps.empty() ? "" : checkpoint_step_dir(dir, steps.back());
}

nlohmann::json checkpoint_checksums(const std::string& step_folder) {
  nlohmann::json sums = nlohmann::json::object();
  for (const auto& entry : fs::directory_iterator(step_folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name != "DONE" && name.find(".tmp") == std::string::npos)
      sums[name] = file_checksum(entry.path().string());
  }
  return sums;
}

void verify_checkpoint_checksums(const std::string& path, const std::vector<std::string>& files) {
  std::ifstream done(path + "/DONE");
  const auto marker = nlohmann::json::parse(done, nullptr, /*allow_exceptions=*/false);
  if (!marker.is_object() || !marker.contains("fnv1a64")) return;  // saved before checksums
  const auto& sums = marker.at("fnv1a64");
  if (!sums.is_object())
    throw CheckpointError(
        "{}/DONE: \"fnv1a64\" is not an object of file names to checksums; the checkpoint is "
        "damaged: delete {} to resume from the one before",
        path, path);
  for (const auto& name : files) {
    const std::string file = path + "/" + name;
    if (!sums.contains(name))
      throw CheckpointError(
          "{}: not among the files the checkpoint was saved with; the checkpoint is damaged: "
          "delete {} to resume from the one before",
          file, path);
    if (!fs::exists(file))
      throw CheckpointError(
          "{}: missing; the checkpoint is damaged: delete {} to resume from the one before", file,
          path);
    const auto& saved = sums.at(name);
    if (!saved.is_string())
      throw CheckpointError(
          "{}/DONE: the checksum saved for {} is not a string; the checkpoint is damaged: "
          "delete {} to resume from the one before",
          path, name, path);
    if (const std::string found = file_checksum(file); found != saved.get<std::string>())
      throw CheckpointError(
          "{}: checksum mismatch (saved {}, found {}): the file changed after it was written; "
          "the checkpoint is damaged: delete {} to resume from the one before",
          file, saved.get<std::string>(), found, path);
  }
}

namespace {

// meta.json's integer `key`, which must be a whole number in [low, high] (a JSON float such
// as 7e82 would not fit: converting it is undefined behaviour, not an error).
int64_t whole_number(const nlohmann::json& meta, const char* key, int64_t low, int64_t high,
                     std::optional<int64_t> fallback = std::nullopt) {
  if (!meta.contains(key) && fallback) return *fallback;
  const nlohmann::json& value = meta.at(key);
  if (!value.is_number_integer())
    throw nlohmann::json::type_error::create(302, std::string(key) + " is not a whole number",
                                             &value);
  // An unsigned value above `high` may not fit int64_t either: compared as unsigned first.
  const bool too_large = value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(high);
  if (too_large || value.get<int64_t>() < low || value.get<int64_t>() > high)
    throw nlohmann::json::out_of_range::create(406, std::string(key) + " is out of range", &value);
  return value.get<int64_t>();
}

}  // namespace

CheckpointState read_checkpoint_meta(const std::string& path) {
  const std::string meta_path = path + "/meta.json";
  std::ifstream meta_file(meta_path);
  if (!meta_file)
    throw CheckpointError(
        "{}: missing; the checkpoint is damaged: delete {} to resume from the one before",
        meta_path, path);
  try {
    const auto meta = nlohmann::json::parse(meta_file);
    CheckpointState state;
    state.step = whole_number(meta, "step", 0, INT64_MAX);
    state.world_size = int(whole_number(meta, "world_size", 1, 1 << 20));
    state.losses = meta.at("losses").get<std::vector<double>>();
    state.train_seconds = meta.value("train_seconds", 0.0);
    state.skipped_steps = whole_number(meta, "skipped_steps", 0, INT64_MAX, 0);
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(
        "{}: not valid checkpoint metadata ({}); the checkpoint is damaged: "
        "delete {} to resume from the one before",
        meta_path, e.what(), path);
  }
}

}  // namespace hlm
