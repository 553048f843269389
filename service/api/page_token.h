// ListJobs page tokens: where the next page starts, sealed so that a
// client can neither read nor forge one. Inside is a position in the
// store's submission order, which spans every tenant; shown in the clear
// it would let a tenant count everyone's jobs. A token is one AES block
// (the position and a tag of the tenant), keyed by the store's secret, so
// every coordinator of the store reads it, and it is good only for the
// tenant it was given to.
#ifndef NPUZZLE_SERVICE_API_PAGE_TOKEN_H_
#define NPUZZLE_SERVICE_API_PAGE_TOKEN_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace npuzzle {

class PageTokens {
 public:
  explicit PageTokens(const std::string& secret);

  std::string Seal(const std::string& tenant, int64_t position) const;
  // InvalidArgument for anything Seal did not make for this tenant.
  absl::StatusOr<int64_t> Open(const std::string& tenant, const std::string& token) const;

 private:
  uint64_t TagOf(const std::string& tenant) const;

  std::array<unsigned char, 16> key_;
  std::string secret_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_PAGE_TOKEN_H_
