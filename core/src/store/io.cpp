// POSIX I/O helpers of the token store (see format.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hlm/errors.h"
#include "store/format.h"

namespace hlm::store {

std::string errno_text() { return std::strerror(errno); }

void pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw DataError("{}: write failed: {} (disk full?)", path, errno_text());
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void pread_all(int fd, void* data, size_t size, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DataError("{}: read failed: {}", path, errno_text());
    if (n == 0) throw DataError("{}: unexpected end of file at byte {}", path, offset);
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void fsync_parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself already happened
  ::fsync(fd);
  ::close(fd);
}

}  // namespace hlm::store
