// DataDirLock: one coordinator per data directory. Two coordinators on one
// job store would run the same jobs twice and overwrite each other's
// results, so a server holds an exclusive lock on DIR/LOCK for its whole
// life, with its process id written inside for the next one to name.
#ifndef NPUZZLE_SERVICE_STORE_DATA_DIR_LOCK_H_
#define NPUZZLE_SERVICE_STORE_DATA_DIR_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace npuzzle {

class DataDirLock {
 public:
  // FailedPrecondition naming the directory and the holder's process id
  // when another process holds it; never waits.
  static absl::StatusOr<std::unique_ptr<DataDirLock>> Acquire(const std::string& dir);
  ~DataDirLock();  // closing the file releases the lock
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_DATA_DIR_LOCK_H_
