// SplitJob: the coordinator's side of one IDA* job spread over workers
// (JobSpec.max_workers). It cuts each threshold into work units, the
// subtrees below the frontier of engine/work_split.h; hands them out, at
// most max_workers at a time; takes each unit's result once; and when a
// threshold's last unit is in, ends the job or starts the next threshold.
//
// Why the answer is the shortest: the first threshold is at most the
// frontier's depth, which no solution is shorter than, and a threshold
// starts only once every unit of the one before has come back having found
// nothing below it. So no solution is shorter than the current threshold,
// and one a unit finds, being no longer than it, is exactly that long.
// Results for another threshold's units, repeats, and results for a unit
// that was handed out again after its worker was lost count once or not at
// all: unit ids are never reused, and a unit is done once.
//
// Order and balance: units go out in the order one IDA* pass would search
// their subtrees (U, D, L, R), so a job whose solution lies partway
// through its last threshold stops about where a single process would
// (handing out the largest first cost the 24-puzzle's first instance 7
// times the nodes). A unit that took more than its share of a threshold
// (IDA*'s passes grow by a similar factor in every subtree) is cut into
// its children for the next, so no unit is much more than a 32nd of a
// worker's share and a threshold's tail is short. What is left of the
// tail, a few units still running while workers are idle, is met by hand
// backs: a running unit is asked to give away the untried subtrees nearest
// its root (engine/search.h's HandBack), which become units of their own.
// The unit's result then covers the rest of its subtree and the subtrees
// it gave cover theirs, so together they cover what the unit would have;
// for the next threshold they are one unit again, and cut by the same
// rule. Not thread-safe: the job manager guards it.
#ifndef NPUZZLE_SERVICE_SPLIT_SPLIT_JOB_H_
#define NPUZZLE_SERVICE_SPLIT_SPLIT_JOB_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/board.h"
#include "engine/move_pruning.h"
#include "engine/moves.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// Whether the job is spread over workers (max_workers above 1).
bool SplitsOverWorkers(const v1::JobSpec& spec);
// Builds, outside the job manager's lock, the pruning machine a split job
// of this shape will look up under it (25 to 200 ms, once per shape).
void WarmSplit(const v1::JobSpec& spec);

class SplitJob {
 public:
  // Subtrees per worker in the first threshold, and the most in any.
  static constexpr int kUnitsPerWorker = 32;
  static constexpr size_t kMaxUnits = 100000;

  // A unit's own small lifecycle: waiting -> out (leased to a worker),
  // out -> waiting (its worker was lost or let it go), and done from
  // either (a result; one for a waiting unit comes from a worker that
  // searched it before it was handed out again). Done is final.
  enum class UnitState { kWaiting, kOut, kDone };
  static bool UnitMoveAllowed(UnitState from, UnitState to);

  struct Unit {
    int64_t id = 0;
    int bound = 0;
    std::vector<Dir> prefix;
  };

  struct Params {
    Board start;
    Board goal;
    const MovePruning* pruning = nullptr;  // may be null
    int max_workers = 1;
    // A checkpoint of an earlier run: the first threshold is its bound when
    // that is above the frontier's depth, and the job's counts include it.
    v1::Checkpoint resume;
    absl::Time started;
    std::string algorithm;  // the names results carry
    std::string heuristic;
  };
  explicit SplitJob(Params params);

  int bound() const { return bound_; }
  absl::Time started() const { return p_.started; }

  // The next unit for `worker`, or none while max_workers are out or none
  // is waiting.
  std::optional<Unit> Lease(const std::string& worker);
  // Whether `unit` is out with `worker`.
  bool Leased(int64_t unit, const std::string& worker) const;
  // Whether `unit` belongs to this threshold and has no result yet.
  bool Pending(int64_t unit) const;
  // How many more workers it could use now: units waiting, up to
  // max_workers out at once.
  size_t WorkersWanted() const { return out_ >= max_out_ ? 0 : std::min(waiting_.size(), max_out_ - out_); }
  // The units out, and with whom.
  std::vector<std::pair<int64_t, std::string>> Out() const;
  // Its worker was lost or let it go: hand it out again (first).
  void Return(int64_t unit);

  // Whether to ask a running unit's worker for part of it back, when other
  // workers are idle (the caller knows) and none of this job's units
  // waits: yes for a unit that has searched long enough to be worth
  // cutting, at most twice a second (a unit near its end may have nothing
  // to give, and is not asked again at every report).
  bool AskHandBack(int64_t unit, absl::Time now);
  // Subtrees below a unit of this threshold that its worker will not search
  // (sent as it gives them, and again with its result): each not yet known
  // becomes a unit, handed out first. An error when one does not lie below
  // the unit. Returns how many units it added.
  absl::StatusOr<int> HandedBack(int64_t unit, const std::vector<std::vector<Dir>>& prefixes);

  // A running unit's latest progress.
  void Progress(int64_t unit, const v1::Progress& progress);
  // A running unit's latest rate (0 when not out). Most units end before
  // their first progress report: until one comes, the rate of the last
  // unit its worker finished stands in.
  double UnitRate(int64_t unit) const;
  // The job's progress: counts over every unit, rates over those running.
  v1::Progress JobProgress(absl::Duration elapsed) const;
  // Nodes expanded in this run: by finished units and running ones.
  uint64_t ExpandedSoFar() const;

  enum class Verdict {
    kIgnored,    // not a unit of this threshold that is still to do
    kWait,       // taken; the threshold goes on
    kNextBound,  // the threshold is done, and the next one's units wait
    kSolved,     // Result() is the answer
    kExhausted,  // no node lies beyond the threshold: no solution
  };
  // A unit's result from `worker`: status "solved", or "depth_limit" with
  // `next_bound` (the smallest f above the bound, 0 for none). Other
  // statuses are not results: the caller decides (see JobManager).
  // `holder` is set to another worker that has the unit out, which should
  // be told to stop.
  Verdict Finished(int64_t unit, const std::string& worker, const v1::Result& result, int next_bound,
                   std::string* holder);

  // The finished thresholds, for the job's checkpoint.
  v1::Checkpoint Checkpoint() const;
  // The job's result: the solution with the job's statistics once solved,
  // else `status` ("cancelled", "time_limit", ...) with them.
  v1::Result Result(const std::string& status, absl::Time now) const;

  // Whether a progress event is due (at most one per `interval`).
  bool ProgressDue(absl::Time now, absl::Duration interval);

 private:
  using State = UnitState;

  struct Entry {
    std::vector<Dir> prefix;
    // The unit of this threshold's first units it was handed back from,
    // itself if none: the next threshold searches that one's whole subtree.
    int64_t origin = 0;
    State state = State::kWaiting;
    std::string worker;
    uint64_t expanded = 0;
    bool empty = false;  // nothing lies below it: not searched again
    v1::Progress progress;
    absl::Time asked = absl::InfinitePast();  // for part of it back
    std::set<std::vector<Dir>> handed_back;
  };
  // Moves `e` to `to` if the unit lifecycle allows it, else changes
  // nothing and returns false.
  static bool Move(Entry& e, State to);

  // Starts the next threshold: units too large are cut into children.
  void NextThreshold(int bound);
  // Adds a unit, waiting last, or first when handed back from `origin`.
  void Queue(std::vector<Dir> prefix, int64_t origin = 0);
  void Count(const v1::Stats& stats, const std::string& worker);
  double RateOf(const Entry& e) const;

  const Params p_;
  const size_t max_out_;

  int bound_ = 0;
  absl::Time threshold_began_ = absl::Now();
  int64_t next_id_ = 1;
  std::map<int64_t, Entry> units_;  // this threshold's
  std::deque<int64_t> waiting_;     // in search order
  size_t out_ = 0;
  size_t done_ = 0;
  int next_bound_ = 0;  // the least f above the bound so far (0: none)

  uint64_t expanded_ = 0;  // by finished units, this run
  uint64_t generated_ = 0;
  uint64_t max_open_ = 0;
  int iterations_ = 0;
  int work_units_ = 0;
  std::set<std::string> workers_;
  std::map<std::string, double> last_rate_;  // by worker: its last finished unit's rate
  v1::Result solution_;
  absl::Time last_progress_ = absl::InfinitePast();
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_SPLIT_SPLIT_JOB_H_
