// absl::Status to grpc::Status: the codes are the same numbers.
#ifndef NPUZZLE_SERVICE_GRPC_STATUS_H_
#define NPUZZLE_SERVICE_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace npuzzle {

inline grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_GRPC_STATUS_H_
