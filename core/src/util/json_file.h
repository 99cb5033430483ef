// JSON files as a run's folders keep them: read whole (nullopt when missing or not JSON), and
// the UTC time stamp they carry.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hlm {

std::optional<nlohmann::json> read_json(const std::string& path);
std::string utc_timestamp();  // ISO 8601, seconds

}  // namespace hlm
