// The pattern-table loader against damaged files: a file that is not the
// table its key asks for, in any respect (header, version, key, size,
// checksum, truncation), is refused with a reason and never crashes the
// reader. Inputs are either a whole file (first byte even) or edits to a
// valid table file (first byte odd): a new length, then (offset, byte)
// pairs, so the fuzzer reaches the checks past the header's checksum. The
// first byte's second bit picks a plain or a zero-aware table (the latter
// with its extras after the entries).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/goals.h"
#include "engine/pdb/pattern_builder.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/pattern_table.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/util/process_util.h"

namespace npuzzle {
namespace {

struct Fixture {
  PatternKey key;
  std::string valid;  // a whole valid file for `key`
  std::string path;   // where inputs are written
};

Fixture* MakeFixture(const std::filesystem::path& dir, bool blank_aware) {
  auto* f = new Fixture;
  f->key.goal = *GoalPreset("standard", 2, 3);
  f->key.group = {1, 2, 3};
  f->key.blank_aware = blank_aware;
  const std::string valid_path = dir / (blank_aware ? "valid-zero.bin" : "valid.bin");
  PatternBuildOptions options;
  options.blank_aware = blank_aware;
  absl::StatusOr<AnonymousMemory> built = BuildPatternDistances(f->key.goal, f->key.group, options);
  FUZZ_CHECK(built.ok(), "building the fixture table");
  FUZZ_CHECK(PatternTable::FromMemory(*std::move(built), f->key)->Save(valid_path, f->key).ok(), "saving it");
  std::ifstream in(valid_path, std::ios::binary);
  f->valid.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  f->path = dir / "input.bin";
  return f;
}

const Fixture& TheFixture(bool blank_aware) {
  static const testing::TempDir temp;  // removed when the fuzzer exits
  static const Fixture* plain = MakeFixture(temp.path(), false);
  static const Fixture* zero_aware = MakeFixture(temp.path(), true);
  return blank_aware ? *zero_aware : *plain;
}

}  // namespace
}  // namespace npuzzle

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuzzle;
  if (size == 0) return 0;
  const Fixture& f = TheFixture((data[0] & 2) != 0);
  std::string file;
  if (data[0] % 2 == 0) {
    file.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  } else {
    file = f.valid;
    size_t i = 1;
    if (i + 2 <= size) {
      const size_t length = (data[i] | data[i + 1] << 8) % (f.valid.size() + 64);
      file.resize(length, '\0');
      i += 2;
    }
    for (; i + 3 <= size && !file.empty(); i += 3) file[(data[i] | data[i + 1] << 8) % file.size()] = data[i + 2];
  }
  {
    std::ofstream out(f.path, std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  absl::StatusOr<std::shared_ptr<const PatternTable>> table = PatternTable::Load(f.path, f.key);
  if (!table.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(table.status()), "refused as %s, not DATA_LOSS", table.status().ToString().c_str());
    return 0;
  }
  // Accepted: it must be the valid table, byte for byte.
  FUZZ_CHECK(file == f.valid, "a changed file was accepted");
  FUZZ_CHECK((*table)->size() == PatternEntries(6, 3), "accepted with %llu entries",
             static_cast<unsigned long long>((*table)->size()));
  return 0;
}
