#include "service/jobs/best_answer.h"

#include <algorithm>

namespace npuzzle {

Improvement MergeBest(const v1::Checkpoint& incoming, v1::Checkpoint* stored) {
  Improvement improved;
  improved.shorter = !incoming.best_moves().empty() &&
                     (stored->best_moves().empty() || incoming.best_moves().size() < stored->best_moves().size());
  improved.higher = incoming.lower_bound() > stored->lower_bound();
  if (improved.shorter) stored->set_best_moves(incoming.best_moves());
  if (improved.higher) stored->set_lower_bound(incoming.lower_bound());
  return improved;
}

void WithStoredBest(const v1::Checkpoint& stored, v1::Progress* progress) {
  const int stored_length = static_cast<int>(stored.best_moves().size());
  if (stored_length > 0 && (progress->best_length() == 0 || stored_length < progress->best_length())) {
    progress->set_best_length(stored_length);
  }
  progress->set_lower_bound(std::max(progress->lower_bound(), stored.lower_bound()));
}

}  // namespace npuzzle
