// The npuzzle CLI's exit statuses, the same for every command and every
// client (Python, Go and Node.js use them too).
#ifndef NPUZZLE_CLIENT_EXIT_CODES_H_
#define NPUZZLE_CLIENT_EXIT_CODES_H_

namespace npuzzle {

inline constexpr int kExitAnswer = 0;    // every job or problem got an answer (unsolvable included)
inline constexpr int kExitFailed = 1;    // a job failed
inline constexpr int kExitUsage = 2;     // bad input, or an RPC error (an unknown job included)
inline constexpr int kExitNoAnswer = 3;  // a limit or a cancel left one unanswered

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_EXIT_CODES_H_
