// A whole client request: SubmitJobRequest bytes, parsed and checked
// exactly as the coordinator checks them (bounds, limit policy, the
// engine's validation), then, when valid and small, solved under tight
// limits as a worker would. An accepted answer must replay from start to
// goal, an "unsolvable" must be, and an optimal length on a board of up to
// six cells must equal breadth-first search's.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "engine/moves.h"
#include "engine/solvability.h"
#include "engine/solver.h"
#include "jobspec/job_spec.h"
#include "jobspec/spec_bounds.h"
#include "npuzzle/v1/solver.pb.h"
#include "service/jobs/limit_policy.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/util/exhaustive.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

LimitPolicy Policy() {
  LimitPolicy p;
  p.defaults.set_max_nodes(20000);
  p.defaults.set_max_time_ms(200);
  p.defaults.set_max_memory_mb(64);
  p.ceilings.set_max_nodes(50000);
  p.ceilings.set_max_time_ms(500);
  p.ceilings.set_max_memory_mb(128);
  p.max_threads = 2;
  return p;
}

// Breadth-first distances to each goal seen, for boards of up to six cells.
int TrueDistance(const Board& start, const Board& goal) {
  static auto* oracles = new std::map<std::string, std::unique_ptr<testing::ExhaustiveDistances>>;
  std::unique_ptr<testing::ExhaustiveDistances>& oracle = (*oracles)[goal.Dimensions() + goal.ToString()];
  if (!oracle) oracle = std::make_unique<testing::ExhaustiveDistances>(goal);
  return oracle->Distance(start);
}

Board Replay(Board board, const std::vector<Dir>& moves) {
  std::vector<int> tiles(board.tiles().begin(), board.tiles().end());
  int blank = board.blank();
  for (Dir d : moves) {
    const int next = NeighborCell(board.rows(), board.cols(), blank, d);
    FUZZ_CHECK(next >= 0, "a move off the board");
    std::swap(tiles[blank], tiles[next]);
    blank = next;
  }
  return *Board::Create(board.rows(), board.cols(), tiles);
}

}  // namespace
}  // namespace npuzzle

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuzzle;
  static const testing::TempDir pdb_dir;  // removed when the fuzzer exits
  v1::SubmitJobRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  if (!CheckSpecBounds(request.spec()).ok()) return 0;
  v1::JobSpec spec = request.spec();
  if (!Policy().Apply(spec).ok()) return 0;
  absl::StatusOr<SolveRequest> solve = RequestFromSpec(spec);
  if (!solve.ok()) {
    FUZZ_CHECK(!solve.status().message().empty(), "an error without a reason");
    return 0;
  }
  FUZZ_CHECK(ValidateSolveRequest(*solve).ok(), "accepted by RequestFromSpec, refused by the engine: %s",
             ValidateSolveRequest(*solve).ToString().c_str());
  const int cells = solve->start.cells();
  // Pattern tables only where they build in milliseconds.
  if (cells > 16 || (solve->heuristic == "pdb" && cells > 9)) return 0;
  solve->options.threads = 1;
  solve->heuristic_options.pdb_dir = pdb_dir.path();
  solve->heuristic_options.pdb_build_threads = 1;
  absl::StatusOr<SolveResult> result = Solve(*solve);
  if (!result.ok()) return 0;
  if (result->status == SearchStatus::kUnsolvable) {
    FUZZ_CHECK(!IsSolvable(solve->start, solve->goal), "a solvable board called unsolvable");
    return 0;
  }
  if (result->status != SearchStatus::kSolved) return 0;
  FUZZ_CHECK(Replay(solve->start, result->moves) == solve->goal, "the moves do not reach the goal");
  if (result->optimal && cells <= 6) {
    FUZZ_CHECK(static_cast<int>(result->moves.size()) == TrueDistance(solve->start, solve->goal),
               "%zu moves marked optimal, BFS says %d", result->moves.size(), TrueDistance(solve->start, solve->goal));
  }
  return 0;
}
