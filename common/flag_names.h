// Lets every npuzzle binary accept --dashed-flag-names (as the docs spell
// them) alongside absl's --underscored_names.
#ifndef NPUZZLE_COMMON_FLAG_NAMES_H_
#define NPUZZLE_COMMON_FLAG_NAMES_H_

namespace npuzzle {

// Rewrites "--max-nodes=5" to "--max_nodes=5" in place, before
// absl::ParseCommandLine; values and positional arguments are untouched.
void NormalizeFlagNames(int argc, char** argv);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_FLAG_NAMES_H_
