#include "engine/pdb/pattern_table.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/pdb/blank_extras.h"
#include "engine/pdb/cell_index.h"
#include "engine/pdb/pattern_groups.h"
#include "engine/pdb/placement.h"

namespace npuzzle {
namespace {

constexpr char kMagic[8] = {'N', 'P', 'Z', 'P', 'D', 'B', '\n', '\0'};
// Version 2 added blank_aware.
constexpr uint32_t kFormatVersion = 2;
// The data starts on a page boundary so it can be mapped as it lies.
constexpr uint64_t kDataOffset = 4096;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t rows;
  uint32_t cols;
  uint32_t group_size;
  uint32_t blank_aware;
  uint8_t goal[kMaxCells];
  uint8_t group[kMaxCells];
  uint64_t entries;
  uint32_t data_crc;
  uint32_t header_crc;  // of every field above
};

Header MakeHeader(const PatternKey& key, uint64_t entries, uint32_t data_crc) {
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.rows = key.goal.rows();
  h.cols = key.goal.cols();
  h.group_size = static_cast<uint32_t>(key.group.size());
  h.blank_aware = key.blank_aware;
  for (int c = 0; c < key.goal.cells(); ++c) h.goal[c] = static_cast<uint8_t>(key.goal.at(c));
  for (size_t i = 0; i < key.group.size(); ++i) h.group[i] = static_cast<uint8_t>(key.group[i]);
  h.entries = entries;
  h.data_crc = data_crc;
  h.header_crc = static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(&h), offsetof(Header, header_crc)));
  return h;
}

// CRC32 of a large buffer on all cores: slices are summed in parallel and
// joined with crc32_combine, giving the same value as one pass.
uint32_t Crc(const uint8_t* data, uint64_t size) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (size < (uint64_t{64} << 20) || threads == 1) {
    return static_cast<uint32_t>(crc32_z(0, data, size));
  }
  const uint64_t slice = size / threads;
  std::vector<uLong> crcs(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const uint64_t begin = t * slice;
      const uint64_t end = t + 1 == threads ? size : begin + slice;
      crcs[t] = crc32_z(0, data + begin, end - begin);
    });
  }
  for (std::thread& w : workers) w.join();
  uLong crc = crcs[0];
  for (unsigned t = 1; t < threads; ++t) {
    const uint64_t length = t + 1 == threads ? size - t * slice : slice;
    crc = crc32_combine64(crc, crcs[t], static_cast<z_off64_t>(length));
  }
  return static_cast<uint32_t>(crc);
}

absl::Status Damaged(const std::string& path, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("pattern table ", path, " is unusable: ", why));
}

}  // namespace

std::string PatternKey::FileName() const {
  std::vector<uint8_t> goal_bytes(goal.tiles().begin(), goal.tiles().end());
  const uLong goal_crc = crc32_z(0, goal_bytes.data(), goal_bytes.size());
  return absl::StrFormat("pdb-%s-%08x-%s%s.bin", goal.Dimensions(), goal_crc, absl::StrJoin(group, "_"),
                         blank_aware ? "-zero" : "");
}

std::string PatternKey::Describe() const {
  return absl::StrCat(goal.Dimensions(), " goal ", goal.ToString(), " tiles ", absl::StrJoin(group, ","),
                      blank_aware ? " zero-aware" : "");
}

uint64_t PatternKey::DataBytes() const {
  const int tiles = static_cast<int>(group.size());
  const uint64_t entries = PatternEntries(goal.cells(), tiles);
  return blank_aware ? BlankExtrasOffset(entries) + BlankExtrasBytes(entries, goal.cells(), tiles) : entries;
}

uint64_t PatternTable::FileBytes(const PatternKey& key) { return kDataOffset + key.DataBytes(); }

PatternTable::~PatternTable() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  if (fd_ >= 0) close(fd_);
}

std::shared_ptr<PatternTable> PatternTable::FromMemory(AnonymousMemory memory, const PatternKey& key) {
  std::shared_ptr<PatternTable> t(new PatternTable);
  t->mapping_bytes_ = memory.bytes();
  t->mapping_ = memory.Release();
  t->data_ = static_cast<const uint8_t*>(t->mapping_);
  t->SetShape(key);
  return t;
}

void PatternTable::SetShape(const PatternKey& key) {
  cells_ = key.goal.cells();
  tiles_ = static_cast<int>(key.group.size());
  size_ = PatternEntries(cells_, tiles_);
  blank_aware_ = key.blank_aware;
  extras_ = blank_aware_ ? reinterpret_cast<const uint64_t*>(data_ + BlankExtrasOffset(size_)) : nullptr;
}

void PatternTable::AddCellIndex(const PatternKey& key) {
  by_cells_ = BuildCellIndex(data_, key.goal.cells(), static_cast<int>(key.group.size()), key.blank_aware);
  if (!by_cells_.ok()) return;
  if (blank_aware_) {
    const uint64_t bytes = BlankExtrasBytes(size_, cells_, tiles_);
    extras_copy_ = AnonymousMemory(bytes);
    if (!extras_copy_.ok()) {
      by_cells_ = AnonymousMemory();
      return;
    }
    std::memcpy(extras_copy_.as<uint64_t>(), extras_, bytes);
    extras_ = extras_copy_.as<uint64_t>();
  }
  munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
  data_ = nullptr;
}

uint8_t PatternTable::operator[](uint64_t rank) const {
  if (data_ != nullptr) return data_[rank];
  uint8_t cell[kMaxCells];
  PlacementIndexer(cells_, tiles_).Unrank(rank, cell);
  uint64_t index = 0;
  for (int i = 0; i < tiles_; ++i) index = index * cells_ + cell[i];
  return by_cells()[index] & (blank_aware_ ? ~kHasBlankExtras : 0xFF);
}

int PatternTable::Value(uint64_t rank, int blank) const {
  if (!blank_aware_) return (*this)[rank];
  uint8_t cell[kMaxCells];
  PlacementIndexer(cells_, tiles_).Unrank(rank, cell);
  CellMask placed = 0;
  for (int i = 0; i < tiles_; ++i) placed |= CellBit(cell[i]);
  return (*this)[rank] + BlankExtraAt(extras_, BlankExtraField(rank, cells_ - tiles_, FreeRank(placed, blank)));
}

absl::StatusOr<std::shared_ptr<const PatternTable>> PatternTable::Load(const std::string& path, const PatternKey& key) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("no pattern table at ", path));
  struct stat st;
  Header h;
  const bool read_ok = fstat(fd, &st) == 0 && pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  if (!read_ok) {
    close(fd);
    return Damaged(path, "shorter than its header");
  }
  const uint64_t entries = PatternEntries(key.goal.cells(), static_cast<int>(key.group.size()));
  const uint64_t data_bytes = key.DataBytes();
  const Header expected = MakeHeader(key, entries, h.data_crc);
  absl::Status problem;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    problem = Damaged(path, "not a pattern table");
  } else if (h.version != kFormatVersion) {
    problem = Damaged(path, absl::StrCat("format version ", h.version, ", expected ", kFormatVersion));
  } else if (h.header_crc !=
             static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(&h), offsetof(Header, header_crc)))) {
    problem = Damaged(path, "header checksum mismatch");
  } else if (std::memcmp(&h, &expected, offsetof(Header, data_crc)) != 0) {
    problem = Damaged(path, absl::StrCat("made for another board, goal or group (wanted ", key.Describe(), ")"));
  } else if (static_cast<uint64_t>(st.st_size) != kDataOffset + data_bytes) {
    problem = Damaged(path, absl::StrFormat("size %d bytes, expected %d", st.st_size, kDataOffset + data_bytes));
  }
  if (!problem.ok()) {
    close(fd);
    return problem;
  }
  // Read into private memory rather than mapped: a file truncated or
  // rewritten under a mapping would kill the process with SIGBUS at its
  // next lookup, and files in a shared cache are beyond our control.
  AnonymousMemory memory(st.st_size);
  if (!memory.ok()) {
    close(fd);
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", st.st_size >> 20, " MiB to load ", path));
  }
  for (uint64_t done = 0; done < static_cast<uint64_t>(st.st_size);) {
    const ssize_t n = pread(fd, memory.as<uint8_t>() + done, std::min<uint64_t>(st.st_size - done, 1 << 26), done);
    if (n <= 0) {
      close(fd);
      return Damaged(path, n == 0 ? "shorter than its header says" : std::strerror(errno));
    }
    done += n;
  }
  // Held while loaded: the cache's eviction passes over tables in use.
  flock(fd, LOCK_SH);
  // Eviction goes by modification time, least recent first.
  futimens(fd, nullptr);
  std::shared_ptr<PatternTable> t(new PatternTable);
  t->fd_ = fd;
  t->mapping_bytes_ = memory.bytes();
  t->mapping_ = memory.Release();
  t->data_ = static_cast<const uint8_t*>(t->mapping_) + kDataOffset;
  t->SetShape(key);
  if (Crc(t->data_, data_bytes) != h.data_crc) return Damaged(path, "data checksum mismatch");
  // Save writes zeros between the header and the data; anything else
  // there means the file was changed, and none but Save's files are used.
  const uint8_t* gap = static_cast<const uint8_t*>(t->mapping_) + sizeof(Header);
  if (std::any_of(gap, gap + (kDataOffset - sizeof(Header)), [](uint8_t b) { return b != 0; })) {
    return Damaged(path, "bytes changed between the header and the data");
  }
  t->AddCellIndex(key);
  return std::shared_ptr<const PatternTable>(std::move(t));
}

absl::Status PatternTable::Save(const std::string& path, const PatternKey& key) const {
  if (data_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot save the table for ", key.Describe(), ": it is laid out by cells, not by rank"));
  }
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", temp, ": ", std::strerror(errno)));
  const uint64_t data_bytes = key.DataBytes();
  const Header h = MakeHeader(key, size_, Crc(data_, data_bytes));
  std::vector<uint8_t> head(kDataOffset, 0);
  std::memcpy(head.data(), &h, sizeof h);
  bool ok = write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size());
  for (uint64_t done = 0; ok && done < data_bytes;) {
    const ssize_t n = write(fd, data_ + done, std::min<uint64_t>(data_bytes - done, 1 << 26));
    ok = n > 0;
    done += ok ? n : 0;
  }
  ok = ok && fsync(fd) == 0;
  close(fd);
  if (!ok || rename(temp.c_str(), path.c_str()) != 0) {
    unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
