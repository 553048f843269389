// An anytime job's best answer and proven lower bound, as the coordinator
// keeps them in the job's checkpoint (durable, and handed to the job's
// next attempt). They only ever improve: a shorter answer replaces the
// stored one, a higher bound the stored bound. A worker's progress is a
// snapshot that can be older than the checkpoint it sent just before it,
// so progress is shown with the stored best wherever that is better, and
// watchers never see the answer lengthen or the bound fall.
#ifndef NPUZZLE_SERVICE_JOBS_BEST_ANSWER_H_
#define NPUZZLE_SERVICE_JOBS_BEST_ANSWER_H_

#include "npuzzle/v1/solver.pb.h"

namespace npuzzle {

struct Improvement {
  bool shorter = false;  // a shorter answer
  bool higher = false;   // a higher bound
  bool any() const { return shorter || higher; }
};

// Folds `incoming`'s answer and bound into `stored`; what improved.
Improvement MergeBest(const v1::Checkpoint& incoming, v1::Checkpoint* stored);

// `progress` with the stored answer's length and bound where they are
// better (the moves themselves are left to the caller).
void WithStoredBest(const v1::Checkpoint& stored, v1::Progress* progress);

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_BEST_ANSWER_H_
