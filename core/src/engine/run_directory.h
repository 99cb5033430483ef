// Files of a run directory: naming, JSON read/write, and the cache index that maps a stage's
// cache key to the folder of the run that produced it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/json_file.h"  // read_json, utc_timestamp

namespace hlm {

// runs_dir/<workflow>/<UTC yyyymmddThhmmssZ>-<8 hex of content_hash>
std::string new_run_directory(const std::string& runs_dir, const std::string& workflow_name,
                              const std::string& content);

// Throws hlm::ConfigError unless run_dir is a run directory: a folder holding a
// workflow.resolved.yaml that parses as a workflow with stages.
void check_run_directory(const std::string& run_dir);

// A stage's manifest.json carries "checksum": the FNV-1a of the manifest without that key. A
// flipped byte in a finished stage's results would otherwise flow into every later stage, the
// cache and the report. write_manifest adds it; read_manifest returns nullopt when the folder
// has no manifest, throws an Error naming the file when it does not parse or its checksum
// fails, and returns the manifest without the key. One written before checksums is read as is.
void write_manifest(const std::string& stage_dir, nlohmann::json manifest);
std::optional<nlohmann::json> read_manifest(const std::string& stage_dir);

// The stage folder that finished with this key, if its manifest says done and its artifacts
// still exist.
std::optional<std::string> cached_stage_dir(const std::string& runs_dir, const std::string& key);
void remember_stage(const std::string& runs_dir, const std::string& key,
                    const std::string& stage_dir);

}  // namespace hlm
