#include "engine/pdb/pattern_groups.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace npuzzle {
namespace {

struct Preset {
  const char* name;
  int rows, cols;
  // Each string is a group's region, one letter per cell, row-major, for a
  // goal whose blank is in the top-left corner.
  const char* layout;
};

// Korf & Felner's partitions (2002): the 15-puzzle's 7-8 halves, 6-6-3
// with the short group on the blank's row, 5-5-5, and the 24-puzzle's
// 6-6-6-6 quadrants. Larger groups are not better by themselves: a 7-7-7-3
// split of 5x5 that transposing maps onto itself (the top-left 3x3 block
// but its far corner, the right and bottom bands, the diagonal's three
// tiles) gave Korf and Taylor's instance 1 a start estimate of 82 against
// 84, and its bound-98 iteration 5.7 times the nodes, with tables 19 times
// the size (three of 2.4 GB, 12.7 minutes and 13 GB each to build).
constexpr Preset kPresets[] = {
    {"8", 3, 3, "AAAAAAAAA"},
    {"7-8", 4, 4, "AAAAAAAABBBBBBBB"},
    {"6-6-3", 4, 4, "AAAABBCCBBCCBBCC"},
    {"5-5-5", 4, 4, "AAAABBAABBCCBCCC"},
    {"6-6-6-6", 5, 5, "AAABBAAABBCCABBCCDDDCCDDD"},
    {"6-6-6-6b", 5, 5, "AAABBAABBBAABCCDDDCCDDDCC"},
};

uint64_t EntriesCapped(int cells, int tiles) {
  uint64_t n = 1;
  for (int i = 0; i < tiles; ++i) {
    n *= static_cast<uint64_t>(cells - i);
    if (n > kMaxPatternEntries * 64) return n;
  }
  return n;
}

absl::Status CheckGroups(const Board& goal, const PatternGroups& groups) {
  const int cells = goal.cells();
  std::map<int, int> owner;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return absl::InvalidArgumentError(absl::StrCat("pattern group ", g + 1, " is empty"));
    for (int t : groups[g]) {
      if (t < 1 || t >= cells) {
        return absl::InvalidArgumentError(
            absl::StrFormat("pattern group %d names tile %d, which a %s board does not have (tiles 1..%d)", g + 1, t,
                            goal.Dimensions(), cells - 1));
      }
      if (auto [it, added] = owner.emplace(t, g); !added) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "tile %d is in pattern groups %d and %d; groups must be disjoint", t, it->second + 1, g + 1));
      }
    }
    const uint64_t entries = EntriesCapped(cells, static_cast<int>(groups[g].size()));
    if (entries > kMaxPatternEntries) {
      return absl::InvalidArgumentError(
          absl::StrFormat("pattern group %d has %d tiles: its table would need more than %d entries on a %s board",
                          g + 1, groups[g].size(), kMaxPatternEntries, goal.Dimensions()));
    }
  }
  if (groups.size() > kMaxPatternGroups) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d pattern groups; at most %d are supported", groups.size(), kMaxPatternGroups));
  }
  return absl::OkStatus();
}

absl::StatusOr<PatternGroups> ParseGroups(absl::string_view text) {
  PatternGroups groups;
  for (absl::string_view part : absl::StrSplit(text, '/')) {
    std::vector<int> group;
    for (absl::string_view token : absl::StrSplit(part, absl::ByAnyChar(", "), absl::SkipEmpty())) {
      int tile;
      if (!absl::SimpleAtoi(token, &tile)) {
        return absl::InvalidArgumentError(absl::StrCat("pattern groups: '", token, "' is not a tile number"));
      }
      group.push_back(tile);
    }
    std::sort(group.begin(), group.end());
    groups.push_back(std::move(group));
  }
  return groups;
}

PatternGroups FromPreset(const Preset& preset, const Board& goal) {
  // Mirror the layout so its top-left corner is the one nearest the blank.
  const int blank = goal.blank();
  const bool flip_rows = blank / goal.cols() >= (goal.rows() + 1) / 2;
  const bool flip_cols = blank % goal.cols() >= (goal.cols() + 1) / 2;
  std::map<char, std::vector<int>> by_letter;
  for (int c = 0; c < goal.cells(); ++c) {
    const int r = c / goal.cols(), col = c % goal.cols();
    const int lr = flip_rows ? goal.rows() - 1 - r : r;
    const int lc = flip_cols ? goal.cols() - 1 - col : col;
    if (goal.at(c) != 0) by_letter[preset.layout[lr * goal.cols() + lc]].push_back(goal.at(c));
  }
  PatternGroups groups;
  for (auto& [letter, tiles] : by_letter) {
    std::sort(tiles.begin(), tiles.end());
    groups.push_back(std::move(tiles));
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

// Goal reading order, cut into groups of the largest size whose tables
// stay within a few million entries; what does not fit in kMaxPatternGroups
// groups is left to Manhattan distance.
PatternGroups Automatic(const Board& goal) {
  const int cells = goal.cells();
  const int tiles = cells - 1;
  int size = 1;
  while (size < tiles && EntriesCapped(cells, size + 1) <= (uint64_t{1} << 24)) ++size;
  const int count = std::min<int>(kMaxPatternGroups, (tiles + size - 1) / size);
  const int covered = std::min(tiles, count * size);
  PatternGroups groups(count);
  int i = 0;
  for (int c = 0; c < cells && i < covered; ++c) {
    if (goal.at(c) != 0) groups[i++ * count / covered].push_back(goal.at(c));
  }
  for (auto& g : groups) std::sort(g.begin(), g.end());
  return groups;
}

std::string FormatPatternGroups(const PatternGroups& groups) {
  return absl::StrJoin(
      groups, "/", [](std::string* out, const std::vector<int>& g) { absl::StrAppend(out, absl::StrJoin(g, ",")); });
}

// One partition, from a preset or groups (at most one of them given) or
// the board's default.
absl::StatusOr<PatternGroups> ResolvePatternGroups(const Board& goal, absl::string_view preset,
                                                   absl::string_view explicit_groups) {
  PatternGroups groups;
  if (!explicit_groups.empty()) {
    absl::StatusOr<PatternGroups> parsed = ParseGroups(explicit_groups);
    if (!parsed.ok()) return parsed.status();
    groups = *std::move(parsed);
  } else if (!preset.empty()) {
    const Preset* found = nullptr;
    for (const Preset& p : kPresets) {
      if (preset == p.name) found = &p;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown pattern preset '", preset,
                                                     "' (known: ", absl::StrJoin(PatternPresetNames(), ", "), ")"));
    }
    if (found->rows != goal.rows() || found->cols != goal.cols()) {
      return absl::InvalidArgumentError(absl::StrFormat("pattern preset %s is for %dx%d boards, not %s", found->name,
                                                        found->rows, found->cols, goal.Dimensions()));
    }
    groups = FromPreset(*found, goal);
  } else if (goal.cells() <= 10) {
    std::vector<int> all;
    for (int t = 1; t < goal.cells(); ++t) all.push_back(t);
    groups = {all};
  } else if (goal.rows() == 4 && goal.cols() == 4) {
    return ResolvePatternGroups(goal, "6-6-3", "");
  } else if (goal.rows() == 5 && goal.cols() == 5) {
    return ResolvePatternGroups(goal, "6-6-6-6", "");
  } else {
    groups = Automatic(goal);
  }
  if (absl::Status s = CheckGroups(goal, groups); !s.ok()) return s;
  return groups;
}

}  // namespace

std::vector<std::string> PatternPresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.push_back(absl::StrFormat("%s (%dx%d)", p.name, p.rows, p.cols));
  return names;
}

uint64_t PatternEntries(int cells, int tiles) { return EntriesCapped(cells, tiles); }

std::string FormatPatternPartitions(const PatternPartitions& partitions) {
  return absl::StrJoin(partitions, "+",
                       [](std::string* out, const PatternGroups& g) { absl::StrAppend(out, FormatPatternGroups(g)); });
}

absl::StatusOr<PatternPartitions> ResolvePatternPartitions(const Board& goal, absl::string_view preset,
                                                           absl::string_view explicit_groups) {
  if (!preset.empty() && !explicit_groups.empty()) {
    return absl::InvalidArgumentError("give either a pattern preset or pattern groups, not both");
  }
  const std::vector<absl::string_view> presets = absl::StrSplit(preset, '+');
  const std::vector<absl::string_view> groups = absl::StrSplit(explicit_groups, '+');
  const size_t count = std::max(presets.size(), groups.size());
  if (count > kMaxPatternPartitions) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d pattern partitions; at most %d are supported", count, kMaxPatternPartitions));
  }
  PatternPartitions partitions;
  for (size_t i = 0; i < count; ++i) {
    // Only the one of the two that was given has `count` parts.
    const absl::string_view one_preset = presets.size() == count ? presets[i] : "";
    const absl::string_view one_groups = groups.size() == count ? groups[i] : "";
    if (count > 1 && one_preset.empty() && one_groups.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("pattern partition %d of %d is empty", i + 1, count));
    }
    absl::StatusOr<PatternGroups> partition = ResolvePatternGroups(goal, one_preset, one_groups);
    if (!partition.ok()) {
      if (count == 1) return partition.status();
      return absl::Status(partition.status().code(),
                          absl::StrFormat("pattern partition %d: %s", i + 1, partition.status().message()));
    }
    partitions.push_back(*std::move(partition));
  }
  return partitions;
}

}  // namespace npuzzle
