// Port files: how a program started with port 0 tells whoever started it
// which ports it took.
#ifndef NPUZZLE_COMMON_PORT_FILE_H_
#define NPUZZLE_COMMON_PORT_FILE_H_

#include <string>

namespace npuzzle {

// Writes `contents` to `path` whole or not at all (a temporary file, then
// a rename), so a process waiting for the file never reads half of it.
void WritePortFile(const std::string& path, const std::string& contents);

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_PORT_FILE_H_
