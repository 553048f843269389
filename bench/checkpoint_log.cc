#include "bench/checkpoint_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace npuzzle::bench {
namespace {

constexpr char kHeader[] = "# korf_pdb checkpoint: ";

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Adds a finished subtree to `p`, or says why it does not belong there.
absl::Status AddSubtree(InstanceProgress& p, const SubtreeCheckpoint& s) {
  if (p.resume_bound <= 0 || s.bound != p.resume_bound) {
    return absl::InvalidArgumentError(
        absl::StrCat("a subtree of bound ", s.bound, ", but the iteration under way is ", p.resume_bound));
  }
  for (const SubtreeCheckpoint& done : p.subtrees) {
    if (done.index == s.index && done.frontier == s.frontier) {
      return absl::InvalidArgumentError(absl::StrCat("subtree ", s.index, " recorded twice"));
    }
  }
  p.subtrees.push_back(s);
  p.generated += s.generated;
  return absl::OkStatus();
}

// One record line, or an error saying what is wrong with it.
absl::Status Parse(absl::string_view line, std::map<int, InstanceProgress>* progress) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  int id;
  double seconds;
  if (f.size() < 2 || !absl::SimpleAtoi(f[1], &id) || !absl::SimpleAtod(f.back(), &seconds) || seconds < 0) {
    return absl::InvalidArgumentError("expected '<record> <id> ... <seconds>'");
  }
  InstanceProgress& p = (*progress)[id];
  if (p.solved) return absl::InvalidArgumentError(absl::StrCat("instance ", id, " was already solved"));
  if (f[0] == "subtree") {
    SubtreeCheckpoint s;
    if (f.size() != 8 || !absl::SimpleAtoi(f[2], &s.bound) || !absl::SimpleHexAtoi(f[3], &s.frontier) ||
        !absl::SimpleAtoi(f[4], &s.index) || !absl::SimpleAtoi(f[5], &s.next_bound) ||
        !absl::SimpleAtoi(f[6], &s.generated) || s.index < 0 || s.next_bound <= s.bound) {
      return absl::InvalidArgumentError(
          "expected 'subtree <id> <bound> <frontier> <index> <next bound> <generated> <seconds>'");
    }
    if (absl::Status added = AddSubtree(p, s); !added.ok()) return added;
    p.seconds = seconds;
    return absl::OkStatus();
  }
  int number;
  uint64_t generated;
  if (f.size() != 5 || !absl::SimpleAtoi(f[2], &number) || !absl::SimpleAtoi(f[3], &generated) || number <= 0) {
    return absl::InvalidArgumentError("expected 'iteration|solved <id> <bound|length> <generated> <seconds>'");
  }
  if (f[0] == "iteration") {
    if (number <= p.resume_bound) return absl::InvalidArgumentError("bounds must grow");
    p.resume_bound = number;
    p.subtrees.clear();
  } else if (f[0] == "solved") {
    p.solved = true;
    p.length = number;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown record '", f[0], "'"));
  }
  p.generated = generated;
  p.seconds = seconds;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckpointLog> CheckpointLog::Open(const std::string& path, const std::string& configuration) {
  CheckpointLog log(path);
  log.fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log.fd_ < 0) return Errno("open", path);
  if (flock(log.fd_, LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is in use by another run"));
  }
  const std::string header = kHeader + configuration;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  // Only whole lines count; a torn last one is cut off before appending.
  const size_t whole = content.rfind('\n') == std::string::npos ? 0 : content.rfind('\n') + 1;
  if (whole < content.size() && ftruncate(log.fd_, static_cast<off_t>(whole)) != 0) {
    return Errno("truncate", path);
  }
  int number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(content).substr(0, whole), '\n', absl::SkipEmpty())) {
    ++number;
    if (number == 1) {
      if (line != header) {
        return absl::FailedPreconditionError(
            absl::StrFormat("%s was written for another run ('%s'), not '%s'; give another file", path, line, header));
      }
      continue;
    }
    if (absl::Status s = Parse(line, &log.progress_); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s line %d: %s", path, number, s.message()));
    }
  }
  if (number == 0) {  // empty, or only a torn header
    if (absl::Status s = log.Append(header); !s.ok()) return s;
  }
  return log;
}

CheckpointLog::CheckpointLog(CheckpointLog&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), progress_(std::move(other.progress_)) {}

CheckpointLog& CheckpointLog::operator=(CheckpointLog&& other) noexcept {
  std::swap(path_, other.path_);
  std::swap(fd_, other.fd_);
  std::swap(progress_, other.progress_);
  return *this;
}

CheckpointLog::~CheckpointLog() {
  if (fd_ >= 0) close(fd_);  // and the lock with it
}

InstanceProgress CheckpointLog::Progress(int id) const {
  const auto it = progress_.find(id);
  return it == progress_.end() ? InstanceProgress{} : it->second;
}

absl::Status CheckpointLog::RecordIteration(int id, int next_bound, uint64_t generated, double seconds) {
  InstanceProgress& p = progress_[id];
  p.resume_bound = next_bound;
  p.subtrees.clear();
  p.generated = generated;
  p.seconds = seconds;
  return Append(absl::StrFormat("iteration %d %d %d %.3f", id, next_bound, generated, seconds));
}

absl::Status CheckpointLog::RecordSolved(int id, int length, uint64_t generated, double seconds) {
  InstanceProgress& p = progress_[id];
  p.solved = true;
  p.length = length;
  p.generated = generated;
  p.seconds = seconds;
  return Append(absl::StrFormat("solved %d %d %d %.3f", id, length, generated, seconds));
}

absl::Status CheckpointLog::RecordSubtree(int id, const SubtreeCheckpoint& s, double seconds) {
  InstanceProgress& p = progress_[id];
  if (absl::Status added = AddSubtree(p, s); !added.ok()) return added;
  p.seconds = seconds;
  return Append(absl::StrFormat("subtree %d %d %016x %d %d %d %.3f", id, s.bound, s.frontier, s.index, s.next_bound,
                                s.generated, seconds));
}

// Whole lines, each on disk before the search goes on: a restart then
// loses at most the iteration under way.
absl::Status CheckpointLog::Append(const std::string& line) {
  const std::string text = line + "\n";
  const bool written = write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd_) == 0;
  return written ? absl::OkStatus() : Errno("write", path_);
}

}  // namespace npuzzle::bench
