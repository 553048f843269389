// CheckpointLog: what a long benchmark run (korf_pdb --checkpoint) has
// finished, kept in a text file so that a run cut short by a restart picks
// up where it was: solved instances are not searched again, and an
// unfinished one resumes at the bound after its last finished IDA*
// iteration (SearchOptions::resume_bound; no solution is shorter, so the
// answer stays optimal), skipping the subtrees of that iteration it had
// finished (SearchOptions::resume_subtrees), so that an iteration of hours
// can be done over several runs. Node counts and seconds add up over the
// runs.
//
// The file is a header naming the configuration, then one line a record,
// appended and flushed to disk as each happens:
//   # korf_pdb checkpoint: <configuration>
//   iteration <id> <next bound> <generated> <seconds>
//   subtree <id> <bound> <frontier> <index> <next bound> <generated> <seconds>
//   solved <id> <length> <generated> <seconds>
// where an iteration's and a solved instance's counts are the instance's
// so far, and a subtree's `generated` is its own (its frontier is a hex
// fingerprint; see SubtreeCheckpoint); seconds are always so far.
// A last line without its newline is a write the restart cut short; it is
// dropped (and cut from the file) rather than trusted. Anything else that
// does not parse, or a header for another configuration, is an error that
// names the file and line: counts from another configuration must not mix.
// A run holds an exclusive lock on the file, so a second run given the
// same file is refused rather than searching the same instance beside it.
#ifndef NPUZZLE_BENCH_CHECKPOINT_LOG_H_
#define NPUZZLE_BENCH_CHECKPOINT_LOG_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/search.h"

namespace npuzzle::bench {

struct InstanceProgress {
  bool solved = false;
  int length = 0;          // when solved
  int resume_bound = 0;    // when not: the next iteration's bound (0: start afresh)
  uint64_t generated = 0;  // over every run
  double seconds = 0;
  // When not solved: the subtrees of the iteration at resume_bound that
  // are done.
  std::vector<SubtreeCheckpoint> subtrees;
};

class CheckpointLog {
 public:
  // Reads `path` if it exists (it must be for `configuration`), else
  // creates it; then holds it until destroyed.
  static absl::StatusOr<CheckpointLog> Open(const std::string& path, const std::string& configuration);

  CheckpointLog(CheckpointLog&& other) noexcept;
  CheckpointLog& operator=(CheckpointLog&& other) noexcept;
  ~CheckpointLog();

  InstanceProgress Progress(int id) const;

  // `generated` and `seconds` are over every run, as Progress gives them.
  absl::Status RecordIteration(int id, int next_bound, uint64_t generated, double seconds);
  absl::Status RecordSolved(int id, int length, uint64_t generated, double seconds);
  // A subtree of the iteration at Progress(id).resume_bound; `seconds` as
  // above, its own nodes in `subtree`.
  absl::Status RecordSubtree(int id, const SubtreeCheckpoint& subtree, double seconds);

 private:
  explicit CheckpointLog(std::string path) : path_(std::move(path)) {}
  absl::Status Append(const std::string& line);

  std::string path_;
  int fd_ = -1;  // open for appending, and locked
  std::map<int, InstanceProgress> progress_;
};

}  // namespace npuzzle::bench

#endif  // NPUZZLE_BENCH_CHECKPOINT_LOG_H_
