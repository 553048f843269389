// Finds damage in a SQLite write-ahead log before SQLite opens it. SQLite
// reads a WAL's frames in order and stops, without a word, at the first
// whose checksum fails: every commit after a damaged frame is dropped,
// acknowledged jobs with it. This reads the log the way SQLite does
// (https://www.sqlite.org/fileformat.html#the_write_ahead_log) and tells
// that case from the harmless one.
//
// The harmless one: a crash in the middle of writing the last transaction
// leaves its frames torn, and that transaction was never acknowledged
// (the store syncs each commit before answering). So a bad frame followed
// by at most one commit frame of the same log (the torn transaction's own)
// is accepted. A bad frame followed by two or more commits of the same log
// means later transactions were written, so the bad one had been synced
// and acknowledged before them: damage.
#ifndef NPUZZLE_SERVICE_STORE_WAL_CHECK_H_
#define NPUZZLE_SERVICE_STORE_WAL_CHECK_H_

#include <string>

#include "absl/status/status.h"

namespace npuzzle {

// OK when `wal_path` is missing, empty, or every commit in it would be
// read; DataLoss naming the frame otherwise.
absl::Status CheckWal(const std::string& wal_path);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_STORE_WAL_CHECK_H_
