#include "engine/anytime/anytime_solver.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/anytime/beam.h"
#include "engine/anytime/grid.h"
#include "engine/anytime/staged.h"
#include "engine/anytime/table_watch.h"
#include "engine/heuristics/pattern_database.h"
#include "engine/puzzle.h"
#include "engine/registry.h"

namespace npuzzle {
namespace {

// auto proves boards this small outright (4x4's worst case is about a
// minute of IDA* with linear conflicts; 3x3 takes milliseconds).
constexpr int kProvenCells = 16;
constexpr int kFirstWidth = 64;
// Without a memory limit, the beams stop widening at about this much.
constexpr uint64_t kDefaultBeamBytes = uint64_t{2} << 30;
constexpr absl::Duration kPollInterval = absl::Milliseconds(5);

// The best answer and the bound, shared by the parts. Every change goes
// through here, so the answer only shortens, the bound only rises, and the
// caller hears of each change in order.
class Race {
 public:
  Race(const SolveRequest& request, int lower_bound) : request_(request), lower_bound_(lower_bound) {}

  // Offers an answer; kept if it is the shortest so far.
  void Offer(std::vector<Dir> moves, bool optimal = false) {
    absl::MutexLock lock(&mu_);
    if (best_ && moves.size() >= best_->size() && !optimal) return;
    if (!best_ || moves.size() <= best_->size()) best_ = std::move(moves);
    if (optimal) lower_bound_ = static_cast<int>(best_->size());
    Changed();
  }
  void RaiseBound(int bound) {
    absl::MutexLock lock(&mu_);
    if (bound <= lower_bound_) return;
    lower_bound_ = bound;
    Changed();
  }
  void Stop(absl::string_view why) {
    absl::MutexLock lock(&mu_);
    StopLocked(why);
  }

  bool stopped() const { return stop_.cancelled(); }
  // Waits until stopped or `timeout` passes.
  void Wait(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto done = [this] { return stopped(); };
    mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

  int best_length() const {
    absl::MutexLock lock(&mu_);
    return best_ ? static_cast<int>(best_->size()) : 0;
  }
  int lower_bound() const {
    absl::MutexLock lock(&mu_);
    return lower_bound_;
  }
  std::optional<std::vector<Dir>> best() const {
    absl::MutexLock lock(&mu_);
    return best_;
  }
  std::string stopped_by() const {
    absl::MutexLock lock(&mu_);
    return stopped_by_;
  }

 private:
  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int length = best_ ? static_cast<int>(best_->size()) : 0;
    // A bound above the answer would be a bug in a part; the answer wins.
    lower_bound_ = best_ ? std::min(lower_bound_, length) : lower_bound_;
    if (request_.on_improvement) request_.on_improvement({best_.value_or(std::vector<Dir>{}), lower_bound_});
    if (!best_) return;
    if (length == lower_bound_) {
      StopLocked("proved optimal");
    } else if (request_.max_gap > 0 && length <= request_.max_gap * lower_bound_) {
      StopLocked("within max_gap");
    }
  }
  void StopLocked(absl::string_view why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (stopped()) return;
    stopped_by_ = std::string(why);
    stop_.Cancel();
  }

  const SolveRequest& request_;
  mutable absl::Mutex mu_;
  std::optional<std::vector<Dir>> best_ ABSL_GUARDED_BY(mu_);
  int lower_bound_ ABSL_GUARDED_BY(mu_);
  std::string stopped_by_ ABSL_GUARDED_BY(mu_);
  CancelToken stop_;
};

// Counts shared with the monitor: the beams' own, and the prover's latest
// progress (IDA* reports its totals).
struct Counts {
  std::atomic<uint64_t> beam_expanded{0};
  std::atomic<uint64_t> beam_generated{0};
  std::atomic<uint64_t> prover_expanded{0};
  std::atomic<uint64_t> prover_generated{0};
  std::atomic<int> prover_iterations{0};
  std::atomic<int> width{0};
  // The prover stopped as its next threshold could not finish in time.
  std::atomic<bool> prover_gave_up{false};
  std::atomic<bool> prover_used_tables{false};
  uint64_t expanded() const { return beam_expanded + prover_expanded; }
  uint64_t generated() const { return beam_generated + prover_generated; }
};

// The improver's rounds: beams below the best length, each twice as wide as
// the last, except that the last one before the time limit is only as wide
// as fits in the time left (a beam's time is about proportional to its
// width). A beam the limit cuts off gives nothing, and at 10 s that was a
// third of the time; one that fits is another try with its own seed.
struct Improver {
  const Grid& grid;
  const GridHeuristic& heuristic;
  const TableWatch& tables;
  const GridState& start;
  // Rises when the prover hands its threads over.
  const std::atomic<int>& threads;
  uint64_t seed;
  uint64_t max_bytes;
  absl::Time deadline;

  // Beams until the race stops or the next would not fit in `max_bytes`.
  // After each, `turn(took)` runs (the prover's turn, when they take
  // turns) and says whether it shares the time left with the beams.
  void Run(Race& race, Counts& counts, const std::function<bool(absl::Duration)>& turn) const {
    uint64_t width = kFirstWidth;
    for (int round = 0;; ++round) {
      const absl::Time began = absl::Now();
      if (!Beam(round, width, race, counts)) return;
      const absl::Duration took = absl::Now() - began;
      const bool shared = turn(took);
      width *= 2;
      if (deadline != absl::InfiniteFuture() && took > absl::ZeroDuration()) {
        // A fifth to spare: the beam's time varies with the board.
        const double fits = 0.8 * absl::FDivDuration(deadline - absl::Now(), took) / (shared ? 2 : 1) / 2;
        width = std::clamp<uint64_t>(static_cast<uint64_t>(fits * width), kFirstWidth, width);
      }
    }
  }

  // False, searching nothing, once the race has stopped or the beam would
  // not fit in `max_bytes`.
  bool Beam(int round, uint64_t width, Race& race, Counts& counts) const {
    const int bound = race.best_length();
    if (race.stopped() || BeamBytes(grid, width, bound) > max_bytes) return false;
    // The widest so far: the last beam may be narrower (it fits the time).
    counts.width = std::max(counts.width.load(), static_cast<int>(width));
    BeamOptions options;
    options.width = static_cast<int>(width);
    options.threads = threads.load();
    options.bound = bound;
    // Held for the beam: the tables may arrive during it, and it ranks
    // every depth alike.
    const std::shared_ptr<const PatternDatabase> held = tables.Get();
    options.tables = held.get();
    options.seed = seed + round;
    options.stop = [&race] { return race.stopped(); };
    options.expanded = &counts.beam_expanded;
    options.generated = &counts.beam_generated;
    if (std::optional<std::vector<Dir>> moves = BeamSearch(grid, heuristic, start, options)) {
      race.Offer(*std::move(moves));
    }
    return true;
  }
};

// Whether the prover's next threshold can finish by the deadline: IDA*'s
// iterations grow by a steady factor (the last two's ratio of nodes), so
// the next takes about that factor times the last one's time. One that
// cannot finish would raise no bound; its threads do better in the beams.
class ThresholdForecast {
 public:
  explicit ThresholdForecast(absl::Time deadline) : deadline_(deadline), last_end_(absl::Now()) {}
  // After each finished iteration; false once the next cannot finish.
  bool NextFinishes(const IterationCheckpoint& c) {
    const absl::Time now = absl::Now();
    const uint64_t nodes = c.generated - generated_before_;
    const double growth = nodes_last_ > 0 ? std::max(2.0, static_cast<double>(nodes) / nodes_last_) : 2.0;
    const absl::Duration next = (now - last_end_) * growth;
    generated_before_ = c.generated;
    nodes_last_ = std::max<uint64_t>(1, nodes);
    last_end_ = now;
    return deadline_ == absl::InfiniteFuture() || now + next <= deadline_;
  }

 private:
  absl::Time deadline_;
  absl::Time last_end_;
  uint64_t generated_before_ = 0;
  uint64_t nodes_last_ = 0;
};

// How a prover's run ended.
enum class ProverEnd {
  kFinished,       // found its answer, was stopped, or gave up
  kSliceEnded,     // its turn is over; the next goes on from the bound
  kTablesArrived,  // the pattern tables are held now: run again with them
};

// The prover: IDA* from the best bound known, with the pattern tables once
// they are held (TableWatch), else with linear conflicts. Beside
// other parts it runs on threads of its own and stops when the race does
// (or after `slice`, when it takes turns with the beams), the solve's loop
// watching the request's cancel and limits for it; it gives up once its
// next threshold cannot finish before the deadline (ThresholdForecast),
// and returns false then, as when it found its answer. Alone (`alone`,
// set with the solve's progress report) it runs on the solve's own thread
// and watches them itself: a small board is proven in microseconds, and
// starting and polling a thread would cost ten times that.
ProverEnd Prove(const SolveRequest& request, const TableWatch& tables, int threads, absl::Time deadline, Race& race,
                Counts& counts, const std::function<void()>* alone = nullptr,
                absl::Duration slice = absl::InfiniteDuration()) {
  const bool with_tables = tables.Get() != nullptr;
  if (with_tables) counts.prover_used_tables = true;
  SearchOptions options;
  options.threads = threads;
  options.seed = request.options.seed;
  options.resume_bound = race.lower_bound();
  if (alone != nullptr) {
    options.cancel = request.options.cancel;
    options.limits = request.options.limits;
    options.limits.max_depth = 0;
    options.limits.max_time = std::max(absl::ZeroDuration(), deadline - absl::Now());
    options.progress_interval = request.options.progress_interval;
  }
  // Stopped with the race (seen at each progress report, every 20 ms) or
  // when the next threshold cannot finish.
  CancelToken give_up;
  ThresholdForecast forecast(deadline);
  if (alone == nullptr) {
    options.cancel = &give_up;
    options.limits.max_memory_bytes = request.options.limits.max_memory_bytes;
    options.limits.max_time = slice;
    options.progress_interval = absl::Milliseconds(20);
  }
  // Counted on from earlier slices, so the totals only grow.
  const uint64_t expanded_before = counts.prover_expanded;
  const uint64_t generated_before = counts.prover_generated;
  bool tables_arrived = false;
  options.on_progress = [&, alone](const Progress& p) {
    counts.prover_expanded = expanded_before + p.expanded;
    counts.prover_generated = generated_before + p.generated;
    if (alone != nullptr && *alone) (*alone)();
    if (race.stopped()) give_up.Cancel();
    // Alone, the prover watches the caller's cancel, not give_up, and a
    // board that small is proven before the tables would load.
    if (alone == nullptr && !with_tables && tables.Get() != nullptr) {
      tables_arrived = true;
      give_up.Cancel();
    }
  };
  options.on_checkpoint = [&, alone](const IterationCheckpoint& c) {
    counts.prover_iterations = c.iterations;
    race.RaiseBound(c.next_bound);
    if (alone == nullptr && !forecast.NextFinishes(c)) {
      counts.prover_gave_up = true;
      give_up.Cancel();
    }
  };
  const Puzzle puzzle(request.goal);
  absl::StatusOr<SearchOutcome> outcome = RunSearch({"idastar", with_tables ? "pdb" : "linear-conflict", 1.0, options,
                                                     with_tables ? tables.options() : HeuristicOptions()},
                                                    puzzle, Puzzle::ToTiles(request.start));
  // Cannot fail: the names are known, and held tables stay held.
  if (!outcome.ok()) return ProverEnd::kFinished;
  counts.prover_expanded = expanded_before + outcome->stats.expanded;
  counts.prover_generated = generated_before + outcome->stats.generated;
  counts.prover_iterations = outcome->stats.iterations;
  if (outcome->status == SearchStatus::kSolved) {
    race.Offer(std::move(outcome->moves), /*optimal=*/true);
  } else if (alone != nullptr) {
    race.Stop(outcome->status == SearchStatus::kCancelled   ? "cancelled"
              : outcome->status == SearchStatus::kTimeLimit ? "time limit"
              : outcome->status == SearchStatus::kNodeLimit ? "node limit"
                                                            : "searches finished");
  }
  if (outcome->status == SearchStatus::kSolved || alone != nullptr) return ProverEnd::kFinished;
  if (tables_arrived && !race.stopped()) return ProverEnd::kTablesArrived;
  return outcome->status == SearchStatus::kTimeLimit ? ProverEnd::kSliceEnded : ProverEnd::kFinished;
}

// How far a run is: of its time limit, or, if further, of the way from
// its first answer's gap (length over lower bound) to the gap it stops at
// (max_gap, else 1: proved optimal). The gap closes unevenly, so the time
// left is the time limit's: the run ends by then at the latest.
void EstimateProgress(Progress& p, double max_gap, absl::Duration time_limit, std::optional<double>& first_gap) {
  double fraction = 0;
  if (time_limit != absl::InfiniteDuration()) {
    fraction = absl::FDivDuration(p.elapsed, time_limit);
    p.time_left = std::max(absl::ZeroDuration(), time_limit - p.elapsed);
  }
  if (p.best_length > 0 && p.lower_bound > 0) {
    const double gap = static_cast<double>(p.best_length) / p.lower_bound;
    if (!first_gap) first_gap = gap;
    const double target = max_gap > 0 ? max_gap : 1.0;
    if (*first_gap > target) fraction = std::max(fraction, (*first_gap - gap) / (*first_gap - target));
  }
  p.fraction_done = std::clamp(fraction, 0.0, 0.99);
}

SearchStatus StatusOf(const std::string& stopped_by, bool answered) {
  if (stopped_by == "cancelled") return SearchStatus::kCancelled;
  if (answered) return SearchStatus::kSolved;
  if (stopped_by == "time limit") return SearchStatus::kTimeLimit;
  if (stopped_by == "node limit") return SearchStatus::kNodeLimit;
  return SearchStatus::kMemoryLimit;  // no beam fitted
}

}  // namespace

absl::StatusOr<SolveResult> SolveAnytime(const SolveRequest& request) {
  const absl::Time begin = absl::Now();
  const SearchOptions& options = request.options;
  const SearchLimits& limits = options.limits;
  const absl::Time deadline =
      limits.max_time == absl::InfiniteDuration() ? absl::InfiniteFuture() : begin + limits.max_time;
  const Grid grid(request.start.rows(), request.start.cols());
  const GridState start = grid.StateOf(request.start);
  const GridState target = grid.StateOf(request.goal);
  const GridHeuristic heuristic(grid, target);
  std::array<uint8_t, 2 * kMaxGridSide> lines;
  const int start_h = heuristic.Evaluate(start, lines.data()).total();

  Race race(request, std::max(start_h, request.resume.lower_bound));
  Counts counts;
  GridState resumed = start;
  if (!request.resume.moves.empty() && grid.Play(resumed, request.resume.moves) && grid.Same(resumed, target)) {
    race.Offer(request.resume.moves);
  }

  const int threads = std::max(1, options.threads);
  const bool fits_prover = request.start.rows() <= kMaxSide && request.start.cols() <= kMaxSide;
  const bool prove_only = request.algorithm == "auto" && grid.cells() <= kProvenCells;
  // One thread for both: they take turns (below).
  const bool take_turns = !prove_only && fits_prover && threads == 1;
  const int prover_threads = prove_only ? threads : fits_prover && threads >= 2 ? 1 : 0;
  const int improver_threads = prove_only ? 0 : threads - prover_threads;
  const uint64_t max_bytes = limits.max_memory_bytes > 0 ? limits.max_memory_bytes : kDefaultBeamBytes;
  std::atomic<int> beam_threads{improver_threads};

  // The solve ends with the widest beam, or when the last part ends (a
  // prover that a memory limit stopped leaves the beams to run on).
  std::atomic<int> running{0};
  std::vector<std::thread> parts;
  auto launch = [&](auto part) {
    ++running;
    parts.emplace_back([&running, &race, part] {
      part();
      if (--running == 0) race.Stop("searches finished");
    });
  };
  // The first answer comes before anything else starts: it takes
  // milliseconds even on 16x16, and every later part is bounded by it.
  if (!race.best()) {
    if (std::optional<std::vector<Dir>> first = SolveByLines(grid, start, target, [&] {
          return (options.cancel != nullptr && options.cancel->cancelled()) || absl::Now() >= deadline;
        })) {
      race.Offer(*std::move(first));
    }
  }
  // After the first answer, which must not wait for tables.
  TableWatch tables(request);
  // The tables' value at the start is a lower bound like any other.
  auto look_for_tables = [&] {
    if (tables.Poll()) race.RaiseBound(PatternDatabase::Value(tables.Get()->Start(Puzzle::ToTiles(request.start))));
  };
  look_for_tables();
  const Improver improver{grid, heuristic, tables, start, beam_threads, options.seed.value_or(0), max_bytes, deadline};
  std::optional<double> first_gap;
  const std::function<void()> report = !options.on_progress ? std::function<void()>() : [&] {
    Progress p;
    p.expanded = counts.expanded();
    p.generated = counts.generated();
    p.open_size = static_cast<uint64_t>(counts.width.load());
    p.elapsed = absl::Now() - begin;
    p.nodes_per_second = static_cast<double>(p.generated) / std::max(1e-9, absl::ToDoubleSeconds(p.elapsed));
    p.best_length = race.best_length();
    p.lower_bound = race.lower_bound();
    EstimateProgress(p, request.max_gap, deadline - begin, first_gap);
    options.on_progress(p);
  };
  // Nothing more to do once the first answer meets the bound.
  if (race.best() && !race.stopped()) {
    if (prove_only) {
      Prove(request, tables, prover_threads, deadline, race, counts, &report);
    } else if (take_turns) {
      // Each beam, then the prover for as long as that beam took: each gets
      // about half the thread. A slice that ends inside an IDA* iteration
      // loses it (the next restarts from the best bound), but the slices
      // double with the beams, so what is repeated stays a fixed share.
      launch([&] {
        bool proving = true;
        improver.Run(race, counts, [&](absl::Duration took) {
          if (proving)
            proving = Prove(request, tables, 1, deadline, race, counts, nullptr, took) != ProverEnd::kFinished;
          return proving;
        });
        race.Stop("widest beam searched");
      });
    } else {
      if (prover_threads > 0) {
        launch([&] {
          while (Prove(request, tables, prover_threads, deadline, race, counts) == ProverEnd::kTablesArrived) {
          }
          beam_threads += prover_threads;  // from the next beam on
        });
      }
      launch([&] {
        improver.Run(race, counts, [](absl::Duration) { return false; });
        race.Stop("widest beam searched");
      });
    }
  }

  absl::Time next_progress = begin + options.progress_interval;
  while (!race.stopped()) {
    if (options.cancel != nullptr && options.cancel->cancelled()) race.Stop("cancelled");
    if (absl::Now() >= deadline) race.Stop("time limit");
    if (limits.max_expanded > 0 && counts.expanded() >= limits.max_expanded) race.Stop("node limit");
    if (parts.empty()) race.Stop("searches finished");
    look_for_tables();
    if (report && absl::Now() >= next_progress) {
      report();
      next_progress = absl::Now() + options.progress_interval;
    }
    race.Wait(kPollInterval);
  }
  for (std::thread& t : parts) t.join();

  SolveResult result;
  result.algorithm = request.algorithm;
  const bool used_tables = tables.Get() != nullptr;
  result.heuristic = used_tables ? "pdb" : "linear-conflict";
  const char* prover_heuristic = counts.prover_used_tables ? "pdb" : "linear-conflict";
  std::optional<std::vector<Dir>> best = race.best();
  result.stopped_by = race.stopped_by();
  result.status = StatusOf(result.stopped_by, best.has_value());
  if (best) result.moves = *std::move(best);
  result.lower_bound = race.lower_bound();
  result.optimal = best && static_cast<int>(result.moves.size()) == result.lower_bound;
  result.stats.expanded = counts.expanded();
  result.stats.generated = counts.generated();
  result.stats.iterations = counts.prover_iterations;
  result.stats.start_h = start_h;
  result.stats.elapsed = absl::Now() - begin;
  result.stats.nodes_per_second =
      static_cast<double>(result.stats.generated) / std::max(1e-9, absl::ToDoubleSeconds(result.stats.elapsed));
  if (prove_only) {
    result.chosen =
        absl::StrCat("idastar with ", prover_heuristic, " on ", threads, threads == 1 ? " thread" : " threads",
                     ": a board of at most ", kProvenCells, " cells is proven quickly");
  } else {
    result.chosen = absl::StrCat(
        "anytime: a first answer by lines, then beams up to width ", counts.width.load(), " over ",
        !used_tables ? std::string("Manhattan distance and linear conflicts")
        : tables.held_from_start()
            ? std::string("the pattern tables built for this goal")
            : absl::StrFormat("Manhattan distance and linear conflicts, and the pattern tables built for this goal "
                              "once loaded (after %.1f s)",
                              absl::ToDoubleSeconds(tables.found_after())),
        "; the bound from ",
        fits_prover
            ? absl::StrCat("idastar with ", prover_heuristic, " (", counts.prover_iterations.load(), " thresholds",
                           counts.prover_gave_up ? "; the next could not finish in time, so "
                                                   "its thread joined the beams)"
                                                 : ")")
            : "the start's heuristic (above 8x8: no prover)");
  }
  return result;
}

}  // namespace npuzzle
