#include "service/store/wal_check.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npuzzle {
namespace {

constexpr size_t kWalHeaderBytes = 32;
constexpr size_t kFrameHeaderBytes = 24;
constexpr uint32_t kMagicLittleEndian = 0x377f0682;
constexpr uint32_t kMagicBigEndian = 0x377f0683;

// Header fields are big-endian whatever the checksums' byte order.
uint32_t BigEndian(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

uint32_t LittleEndian(const uint8_t* p) {
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | uint32_t{p[0]};
}

// SQLite's running checksum over `size` bytes (a multiple of 8), continued
// from `s`.
void Checksum(const uint8_t* data, size_t size, bool big_endian, uint32_t s[2]) {
  for (size_t i = 0; i + 8 <= size; i += 8) {
    const uint32_t a = big_endian ? BigEndian(data + i) : LittleEndian(data + i);
    const uint32_t b = big_endian ? BigEndian(data + i + 4) : LittleEndian(data + i + 4);
    s[0] += a + s[1];
    s[1] += b + s[0];
  }
}

}  // namespace

absl::Status CheckWal(const std::string& wal_path) {
  std::ifstream in(wal_path, std::ios::binary);
  if (!in) return absl::OkStatus();  // no log: nothing to lose
  const std::vector<uint8_t> wal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (wal.size() < kWalHeaderBytes) return absl::OkStatus();
  const uint8_t* header = wal.data();
  const uint32_t magic = BigEndian(header);
  if (magic != kMagicLittleEndian && magic != kMagicBigEndian) return absl::OkStatus();  // SQLite ignores it too
  const bool big_endian = magic == kMagicBigEndian;
  const uint32_t page_size = BigEndian(header + 8);
  const uint32_t salt[2] = {BigEndian(header + 16), BigEndian(header + 20)};
  uint32_t sum[2] = {0, 0};
  Checksum(header, 24, big_endian, sum);
  // A header that fails its checksum makes SQLite ignore the whole log.
  const bool header_ok = sum[0] == BigEndian(header + 24) && sum[1] == BigEndian(header + 28);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) return absl::OkStatus();

  const size_t frame_bytes = kFrameHeaderBytes + page_size;
  const size_t frames = (wal.size() - kWalHeaderBytes) / frame_bytes;
  size_t first_bad = header_ok ? frames : 0;
  for (size_t f = 0; header_ok && f < frames; ++f) {
    const uint8_t* frame = wal.data() + kWalHeaderBytes + f * frame_bytes;
    if (BigEndian(frame + 8) != salt[0] || BigEndian(frame + 12) != salt[1]) {
      first_bad = f;
      break;
    }
    Checksum(frame, 8, big_endian, sum);
    Checksum(frame + kFrameHeaderBytes, page_size, big_endian, sum);
    if (sum[0] != BigEndian(frame + 16) || sum[1] != BigEndian(frame + 20)) {
      first_bad = f;
      break;
    }
  }
  // Commits of this log (its salts) at or after the first bad frame.
  int later_commits = 0;
  for (size_t f = first_bad; f < frames; ++f) {
    const uint8_t* frame = wal.data() + kWalHeaderBytes + f * frame_bytes;
    const bool this_log = BigEndian(frame + 8) == salt[0] && BigEndian(frame + 12) == salt[1];
    if (this_log && BigEndian(frame + 4) != 0) ++later_commits;
  }
  if (later_commits >= 2) {
    return absl::DataLossError(absl::StrCat(wal_path, " is damaged at frame ", first_bad + 1, " of ", frames, ": ",
                                            later_commits - 1, " committed transactions after it would be lost"));
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
