// What a JobSpec may name, as JSON, for clients that build specs from a
// menu (the web page): the algorithms and heuristics from the engine's
// registry, the goal presets (and each one's board for every shape) and the
// pattern-database presets.
#ifndef NPUZZLE_JOBSPEC_CATALOG_H_
#define NPUZZLE_JOBSPEC_CATALOG_H_

#include <string>

namespace npuzzle {

// {"algorithms": [{"name", "summary", "usesHeuristic", "optimal",
// "takesWeight"}], "heuristics": [{"name", "summary", "admissible",
// "takesPatternGroups"}], "goalPresets": [...], "pdbPresets": [...],
// "goals": {"3x3": {"standard": [tiles...], ...}, ...}} with every shape the
// engine takes.
std::string CatalogJson();

}  // namespace npuzzle

#endif  // NPUZZLE_JOBSPEC_CATALOG_H_
