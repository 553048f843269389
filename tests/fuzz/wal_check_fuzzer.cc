// The write-ahead-log check against any file: it reads only what the file
// holds (frame counts, page sizes and offsets all come from the file), so
// whatever the bytes, it answers OK or DATA_LOSS and never crashes or reads
// past the end.

#include <cstdint>
#include <fstream>
#include <string>

#include "service/store/wal_check.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/util/process_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const npuzzle::testing::TempDir* temp = new npuzzle::testing::TempDir;
  const std::string path = temp->path() + "/jobs.db-wal";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const absl::Status status = npuzzle::CheckWal(path);
  FUZZ_CHECK(status.ok() || absl::IsDataLoss(status), "answered %s", status.ToString().c_str());
  return 0;
}
