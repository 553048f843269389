// TokenBook: which tenant a bearer token belongs to, and the tenant's
// quotas. It reads a file of lines
//   TENANT SHA256-HEX-OF-TOKEN [max_queued=N] [max_running=N]
// (blank lines and # comments aside), so the file holds no token in the
// clear, and re-reads it when it changes (checked on calls): a token is
// added or revoked, a quota changed, without a restart. A changed file
// that does not parse is refused and the one before it stays in force, so
// a typo cannot lock every client out.
#ifndef NPUZZLE_SERVICE_API_TOKEN_BOOK_H_
#define NPUZZLE_SERVICE_API_TOKEN_BOOK_H_

#include <ctime>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/jobs/tenant_quota.h"

namespace npuzzle {

// Tenant names: 1 to 64 of [A-Za-z0-9._-].
bool IsTenantName(const std::string& name);

// The lowercase hex SHA-256 of `text`.
std::string Sha256Hex(const std::string& text);

class TokenBook {
 public:
  struct Entries {
    absl::flat_hash_map<std::string, std::string> tenant_by_hash;
    // Quotas a tenant's lines set (a field left out there is -1).
    absl::flat_hash_map<std::string, TenantQuota> quotas;
  };
  // Errors name the file and the line.
  static absl::StatusOr<Entries> Parse(const std::string& path, const std::string& text);

  // Loads `path` (an error if it cannot), then checks it for changes at
  // most once per `recheck`; reloads and refused files are logged.
  static absl::StatusOr<std::unique_ptr<TokenBook>> Open(const std::string& path, absl::Duration recheck);

  // The tenant of the `authorization` header's value ("Bearer TOKEN"), or
  // UNAUTHENTICATED saying whether it was missing or unknown.
  absl::StatusOr<std::string> TenantOf(const std::string* authorization) ABSL_LOCKS_EXCLUDED(mu_);

  // The tenant's quota: what the file sets for it, else `defaults`.
  TenantQuota QuotaOf(const std::string& tenant, const TenantQuota& defaults) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  TokenBook(std::string path, absl::Duration recheck) : path_(std::move(path)), recheck_(recheck) {}
  // Re-reads the file if its size or time stamp changed. The reading
  // happens under reload_mu_ only, so lookups (the job manager's quota
  // checks among them) never wait on the disk; mu_ is held just to swap.
  absl::Status Reload() ABSL_LOCKS_EXCLUDED(mu_, reload_mu_);
  // Reload, when the last check is `recheck_` old.
  void MaybeReload() ABSL_LOCKS_EXCLUDED(mu_, reload_mu_);

  const std::string path_;
  const absl::Duration recheck_;
  absl::Mutex mu_;
  Entries entries_ ABSL_GUARDED_BY(mu_);
  absl::Time next_check_ ABSL_GUARDED_BY(mu_);
  absl::Mutex reload_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // The file as last read: a change of either means a new version.
  timespec mtime_ ABSL_GUARDED_BY(reload_mu_) = {};
  off_t size_ ABSL_GUARDED_BY(reload_mu_) = -1;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_TOKEN_BOOK_H_
