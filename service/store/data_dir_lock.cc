#include "service/store/data_dir_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace npuzzle {

absl::StatusOr<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& dir) {
  const std::string path = dir + "/LOCK";
  // Close-on-exec: a lock inherited by the local workers would outlive a
  // killed server and keep its successor out.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open the data directory's lock file ", path, ": ", strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char text[32] = {};
    const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    close(fd);
    int pid = 0;
    const bool known = n > 0 && absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid);
    if (error != EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat("cannot lock ", path, ": ", strerror(error)));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", dir, " is in use by another npuzzle-server",
                     known ? absl::StrCat(" (process ", pid, ")") : std::string(),
                     "; one coordinator per data directory: stop that one or give this one another --data-dir"));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot write ", path, ": ", strerror(error)));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

DataDirLock::~DataDirLock() { close(fd_); }

}  // namespace npuzzle
