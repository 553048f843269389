// Conversions between the service's protocol (npuzzle.v1) and the engine:
// a JobSpec checked and turned into a SolveRequest, and results and
// progress turned back into messages. Shared by the worker (which runs
// specs), the coordinator (which validates them) and the client.
#ifndef NPUZZLE_JOBSPEC_JOB_SPEC_H_
#define NPUZZLE_JOBSPEC_JOB_SPEC_H_

#include "absl/status/statusor.h"
#include "engine/board.h"
#include "engine/search.h"
#include "engine/solver.h"
#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

// JobSpec.max_workers' ceiling.
inline constexpr int kMaxWorkersPerJob = 1000;

// Reads the boards, names and limits of `spec` and checks the request as
// the engine would. Errors are InvalidArgument and name the field
// ("start: duplicate tile 5 (positions 5 and 6)").
absl::StatusOr<SolveRequest> RequestFromSpec(const v1::JobSpec& spec);

// Whether running a spec failed because of the spec itself (a request the
// engine refuses: InvalidArgument, FailedPrecondition, OutOfRange,
// Unimplemented), so that it would fail the same way on any worker, as
// opposed to a failure of the machinery (memory, files, I/O).
bool IsSpecError(const absl::Status& status);

// The spec a SolveRequest describes (boards as tiles).
v1::JobSpec SpecFromRequest(const SolveRequest& request);

v1::Board BoardToProto(const Board& board);
absl::StatusOr<Board> BoardFromProto(const v1::Board& board, int rows = 0, int cols = 0);

v1::Result ResultToProto(const SolveResult& result);
SolveResult ResultFromProto(const v1::Result& result);

v1::Progress ProgressToProto(const Progress& progress);
Progress ProgressFromProto(const v1::Progress& progress);

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_JOB_SPEC_H_
