// TenantQuota: how many jobs one tenant may have waiting, and running, at
// once. The server's flags give every tenant a default; the tokens file
// may give a tenant its own.
#ifndef NPUZZLE_SERVICE_JOBS_TENANT_QUOTA_H_
#define NPUZZLE_SERVICE_JOBS_TENANT_QUOTA_H_

#include <cstdint>

namespace npuzzle {

struct TenantQuota {
  int64_t max_queued = 0;   // 0: no limit
  int64_t max_running = 0;  // 0: no limit
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_JOBS_TENANT_QUOTA_H_
