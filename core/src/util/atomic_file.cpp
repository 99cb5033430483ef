// Whole-or-nothing file writes (see atomic_file.h).
#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "hlm/errors.h"

namespace fs = std::filesystem;

namespace hlm {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& tmp, const std::string& reason) {
  std::error_code ec;
  fs::remove(tmp, ec);
  throw Error(
      "{}: cannot write ({}); check free space and permissions (the previous file, if any, "
      "is unchanged)",
      path, reason);
}

// fsync of an open file or folder; false with errno set on failure.
bool sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

void publish(const std::string& path, const std::string& tmp) {
  if (!sync_path(tmp, O_RDONLY)) fail(path, tmp, std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(path, tmp, std::strerror(errno));
  const fs::path folder = fs::path(path).parent_path();
  sync_path(folder.empty() ? "." : folder.string(), O_RDONLY | O_DIRECTORY);  // best effort
}

// `path.tmp.<pid>.<n>`: a name no other writer of the same path uses. With one shared
// `path.tmp`, two runs recording the same stage-cache entry at once wrote into one temp file,
// and the second rename failed with ENOENT (found by ConcurrentRuns).
std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = temp_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, tmp, std::strerror(errno));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail(path, tmp, std::strerror(saved));
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) fail(path, tmp, std::strerror(errno));
  publish(path, tmp);
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const std::string& tmp)>& write) {
  const std::string tmp = temp_name(path);
  try {
    write(tmp);
  } catch (const std::exception& e) {
    fail(path, tmp, e.what());
  }
  if (!fs::exists(tmp)) fail(path, tmp, "the writer produced no file");
  publish(path, tmp);
}

}  // namespace hlm
