#include "jobspec/checkpoint.h"

#include <algorithm>
#include <climits>
#include <string>

namespace npuzzle {

v1::Checkpoint AfterIteration(const v1::Checkpoint& earlier, const IterationCheckpoint& c) {
  v1::Checkpoint out;
  out.set_bound(c.next_bound);
  out.set_expanded(earlier.expanded() + c.expanded);
  out.set_generated(earlier.generated() + c.generated);
  out.set_iterations(earlier.iterations() + c.iterations);
  return out;
}

void AddSubtree(const SubtreeCheckpoint& s, v1::Checkpoint* checkpoint) {
  if (s.index < 0 || static_cast<size_t>(s.index) >= kMaxCheckpointSubtrees) return;
  if (checkpoint->bound() != s.bound || checkpoint->frontier() != s.frontier) {
    // A fresh job's first threshold has no checkpoint yet; resuming there
    // is starting afresh, so the bound is as safe as any later one.
    checkpoint->set_bound(s.bound);
    checkpoint->set_frontier(s.frontier);
    checkpoint->clear_subtrees_done();
    checkpoint->set_subtrees_next_bound(INT_MAX);
  }
  std::string& done = *checkpoint->mutable_subtrees_done();
  const size_t byte = static_cast<size_t>(s.index) / 8;
  if (done.size() <= byte) done.resize(byte + 1, '\0');
  done[byte] = static_cast<char>(done[byte] | (1 << (s.index % 8)));
  checkpoint->set_subtrees_next_bound(std::min(checkpoint->subtrees_next_bound(), s.next_bound));
  checkpoint->set_expanded(checkpoint->expanded() + s.expanded);
  checkpoint->set_generated(checkpoint->generated() + s.generated);
}

std::vector<SubtreeCheckpoint> SubtreesDone(const v1::Checkpoint& checkpoint) {
  std::vector<SubtreeCheckpoint> out;
  const std::string& done = checkpoint.subtrees_done();
  if (done.size() * 8 > kMaxCheckpointSubtrees) return out;
  for (size_t i = 0; i < done.size() * 8; ++i) {
    if ((static_cast<unsigned char>(done[i / 8]) >> (i % 8) & 1) == 0) continue;
    // Each gets the least next bound of them all, which is all the engine
    // takes from them: the least.
    out.push_back(
        {checkpoint.bound(), checkpoint.frontier(), static_cast<int>(i), checkpoint.subtrees_next_bound(), 0, 0});
  }
  return out;
}

bool MergeThreshold(const v1::Checkpoint& incoming, v1::Checkpoint* stored) {
  if (incoming.subtrees_done().size() * 8 > kMaxCheckpointSubtrees) return false;
  const bool further = incoming.bound() > stored->bound() ||
                       (incoming.bound() == stored->bound() && incoming.generated() > stored->generated());
  if (!further) return false;
  stored->set_bound(incoming.bound());
  stored->set_expanded(incoming.expanded());
  stored->set_generated(incoming.generated());
  stored->set_iterations(incoming.iterations());
  stored->set_frontier(incoming.frontier());
  stored->set_subtrees_done(incoming.subtrees_done());
  stored->set_subtrees_next_bound(incoming.subtrees_next_bound());
  return true;
}

}  // namespace npuzzle
