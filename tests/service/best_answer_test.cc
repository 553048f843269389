// The anytime best answer the coordinator keeps only improves, and
// progress shows it wherever it is better than a worker's snapshot.
#include "service/jobs/best_answer.h"

#include "gtest/gtest.h"

namespace npuzzle {
namespace {

v1::Checkpoint Best(const std::string& moves, int bound) {
  v1::Checkpoint c;
  c.set_best_moves(moves);
  c.set_lower_bound(bound);
  return c;
}

TEST(BestAnswer, OnlyAShorterAnswerOrAHigherBoundIsTaken) {
  v1::Checkpoint stored = Best("UUDDLLRR", 4);
  Improvement i = MergeBest(Best("UUDDLLRRUD", 6), &stored);  // longer answer, higher bound
  EXPECT_FALSE(i.shorter);
  EXPECT_TRUE(i.higher);
  EXPECT_EQ(stored.best_moves(), "UUDDLLRR");
  EXPECT_EQ(stored.lower_bound(), 6);
  i = MergeBest(Best("UULL", 5), &stored);  // shorter answer, lower bound
  EXPECT_TRUE(i.shorter);
  EXPECT_FALSE(i.higher);
  EXPECT_EQ(stored.best_moves(), "UULL");
  EXPECT_EQ(stored.lower_bound(), 6);
  EXPECT_FALSE(MergeBest(Best("", 0), &stored).any());  // no answer yet: nothing to take
}

TEST(BestAnswer, ProgressNeverShowsALongerAnswerOrALowerBound) {
  const v1::Checkpoint stored = Best("UULL", 3);
  v1::Progress older;
  older.set_best_length(6);
  older.set_lower_bound(2);
  WithStoredBest(stored, &older);
  EXPECT_EQ(older.best_length(), 4);
  EXPECT_EQ(older.lower_bound(), 3);
  v1::Progress newer;
  newer.set_best_length(2);
  newer.set_lower_bound(4);
  WithStoredBest(stored, &newer);
  EXPECT_EQ(newer.best_length(), 2);
  EXPECT_EQ(newer.lower_bound(), 4);
  v1::Progress none;
  WithStoredBest(v1::Checkpoint(), &none);
  EXPECT_EQ(none.best_length(), 0);
}

}  // namespace
}  // namespace npuzzle
