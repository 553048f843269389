// absl::Status to grpc::Status and back: the codes are the same numbers.
#ifndef NPUZZLE_COMMON_GRPC_STATUS_H_
#define NPUZZLE_COMMON_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace npuzzle {

inline grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace npuzzle

#endif  // NPUZZLE_COMMON_GRPC_STATUS_H_
