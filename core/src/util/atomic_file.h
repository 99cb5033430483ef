// Files written whole or not at all: the content goes to `path.tmp.<pid>.<n>` (a name of this
// writer's own, so concurrent writers of one path never share it), which is fsynced and
// renamed over `path`, and then the folder is fsynced so the rename itself survives a crash.
// A reader sees the old file or the new one, never a part. On failure the old file is
// unchanged, the temp file is removed, and hlm::Error names the path and the reason.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace hlm {

void write_file_atomic(const std::string& path, std::string_view bytes);
// For writers that open the file themselves: `write` fills the temp path it is given.
void write_file_atomic(const std::string& path,
                       const std::function<void(const std::string& tmp)>& write);

}  // namespace hlm
