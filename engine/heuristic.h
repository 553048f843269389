// The contract between searches and heuristics. A heuristic is written once
// against Tiles and used by every algorithm; the algorithms are templates
// over it so the hot loops inline the heuristic's update.
//
//   using Node = ...;   what one state hands to its children: at least the
//                       value, plus anything that makes updates cheap.
//   Node Start(const Tiles& s) const;          evaluate from scratch
//   Node Move(const Tiles& s, const Node& n, int tile, int from, int to) const;
//       the child's Node after `tile` slides from `from` to `to` (where the
//       blank was); `s` and `n` are the parent's.
//   static int Value(const Node& n);
//   static constexpr bool kReadsTiles;   optional, default true: false when
//       Move never looks at `s`, which spares graph searches unpacking it.
//
// Optional, for heuristics that take the largest of several estimates,
// each costing as much as the first (a pattern database's mirror and
// further partitions):
//   Node MoveFirst(const Tiles& s, const Node& n, int tile, int from, int to) const;
//   static int FirstValue(const Node& m);   a lower bound on Value, from
//       MoveFirst's node alone
//   bool MoveRest(const Tiles& s, const Node& n, int tile, int from, int to, Node* m, int enough) const;
//       completes m (MoveFirst's node) into what Move would return; or
//       stops and returns false, m unfinished, once an estimate reaches
//       `enough` (Value is then at least that).
// IDA* skips the rest for a child the estimates so far already prune.
#ifndef NPUZZLE_ENGINE_HEURISTIC_H_
#define NPUZZLE_ENGINE_HEURISTIC_H_

#include <concepts>

#include "engine/puzzle.h"

namespace npuzzle {

template <class H>
concept Heuristic = requires(const H& h, const Tiles& s, const typename H::Node& n, int tile, int cell) {
  { h.Start(s) } -> std::same_as<typename H::Node>;
  { h.Move(s, n, tile, cell, cell) } -> std::same_as<typename H::Node>;
  { H::Value(n) } -> std::convertible_to<int>;
};

template <class H>
concept TwoStageHeuristic = Heuristic<H> &&
    requires(const H& h, const Tiles& s, const typename H::Node& n, typename H::Node* m, int tile, int cell) {
  { h.MoveFirst(s, n, tile, cell, cell) } -> std::same_as<typename H::Node>;
  { H::FirstValue(n) } -> std::convertible_to<int>;
  { h.MoveRest(s, n, tile, cell, cell, m, cell) } -> std::same_as<bool>;
};

template <Heuristic H>
constexpr bool ReadsTiles() {
  if constexpr (requires { H::kReadsTiles; }) {
    return H::kReadsTiles;
  } else {
    return true;
  }
}

}  // namespace npuzzle

#endif  // NPUZZLE_ENGINE_HEURISTIC_H_
