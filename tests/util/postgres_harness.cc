#include "tests/util/postgres_harness.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/util/process_util.h"

namespace npuzzle::testing {
namespace {

constexpr uid_t kNobody = 65534;

// Debian installs each major version's server programs in their own
// directory; the newest is used.
std::string ServerBinDir() {
  std::string newest;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
    const std::string bin = entry.path().string() + "/bin";
    if (std::filesystem::exists(bin + "/pg_ctl") && bin > newest) newest = bin;
  }
  return newest;
}

std::string Quoted(const std::string& s) { return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'"; }

}  // namespace

Postgres::Postgres(Place place) {
  const std::string bin = ServerBinDir();
  if (bin.empty()) {
    status_ =
        absl::FailedPreconditionError("no PostgreSQL server under /usr/lib/postgresql (scripts/setup installs it)");
    return;
  }
  std::error_code error;
  const bool in_memory =
      place == Place::kMemory && std::filesystem::is_directory("/dev/shm", error) && access("/dev/shm", W_OK) == 0;
  const std::filesystem::path parent = in_memory ? "/dev/shm" : std::filesystem::temp_directory_path();
  std::string pattern = (parent / "npuzzle-pg-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    status_ = absl::InternalError(absl::StrCat("cannot make a directory under ", parent.string()));
    return;
  }
  root_ = pattern;
  if (geteuid() == 0 && chown(root_.c_str(), kNobody, kNobody) != 0) {
    status_ = absl::InternalError("cannot give the cluster's directory to nobody");
    return;
  }
  const CommandResult made =
      RunCommand(AsOwner(absl::StrCat(bin, "/initdb -D ", root_, "/data -A trust -U npuzzle ",
                                      "-E UTF8 --locale=C.UTF-8 --no-sync > ", root_, "/initdb.log 2>&1")));
  if (made.exit_code != 0) {
    status_ = absl::InternalError(absl::StrCat("initdb failed: see ", root_, "/initdb.log"));
    return;
  }
  status_ = Start();
  if (!status_.ok()) return;
  Sql("CREATE DATABASE npuzzle");
}

Postgres::~Postgres() {
  if (root_.empty()) return;
  Stop().IgnoreError();
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

std::string Postgres::AsOwner(const std::string& command) const {
  return geteuid() == 0 ? absl::StrCat("runuser -u nobody -- /bin/sh -c ", Quoted(command)) : command;
}

std::string Postgres::uri(const std::string& database) const {
  return absl::StrCat("postgresql:///", database, "?host=", root_, "&user=npuzzle");
}

std::string Postgres::Sql(const std::string& sql) const {
  return RunCommand(absl::StrCat("psql -X -q -t -A -h ", root_, " -U npuzzle -d postgres -c ", Quoted(sql))).out;
}

absl::Status Postgres::Start() {
  // No TCP port: the socket in the cluster's directory is the only way in.
  const CommandResult started = RunCommand(
      AsOwner(absl::StrCat(ServerBinDir(), "/pg_ctl -D ", root_, "/data -l ", root_, "/server.log -w -t 60 -o ",
                           Quoted(absl::StrCat("-c listen_addresses= -k ", root_)), " start > /dev/null 2>&1")));
  if (started.exit_code != 0)
    return absl::InternalError(absl::StrCat("pg_ctl start failed: see ", root_, "/server.log"));
  return absl::OkStatus();
}

absl::Status Postgres::Stop() {
  const CommandResult stopped = RunCommand(
      AsOwner(absl::StrCat(ServerBinDir(), "/pg_ctl -D ", root_, "/data -m immediate -w stop > /dev/null 2>&1")));
  if (stopped.exit_code != 0) return absl::InternalError("pg_ctl stop failed");
  return absl::OkStatus();
}

}  // namespace npuzzle::testing
