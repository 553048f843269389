#include "common/port_file.h"

#include <filesystem>
#include <fstream>

namespace npuzzle {

void WritePortFile(const std::string& path, const std::string& contents) {
  const std::string temporary = path + ".tmp";
  std::ofstream(temporary) << contents;
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
}

}  // namespace npuzzle
