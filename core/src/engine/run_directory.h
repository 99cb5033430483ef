// Files of a run directory: naming, JSON read/write, and the cache index that maps a stage's
// cache key to the folder of the run that produced it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hlm {

// runs_dir/<workflow>/<UTC yyyymmddThhmmssZ>-<8 hex of content_hash>
std::string new_run_directory(const std::string& runs_dir, const std::string& workflow_name,
                              const std::string& content);
std::string utc_timestamp();  // ISO 8601, seconds
// Writes atomically (temp file + rename) so a crash never leaves half a file.
void write_text_atomic(const std::string& path, const std::string& text);
std::optional<nlohmann::json> read_json(const std::string& path);

// The stage folder that finished with this key, if its manifest says done and its artifacts
// still exist.
std::optional<std::string> cached_stage_dir(const std::string& runs_dir, const std::string& key);
void remember_stage(const std::string& runs_dir, const std::string& key,
                    const std::string& stage_dir);

}  // namespace hlm
