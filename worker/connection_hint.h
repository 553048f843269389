// Why a worker cannot work with the coordinator it dials, in words an
// operator can act on. gRPC's own message names the symptom ("Socket
// closed", a handshake error, UNIMPLEMENTED), and a worker that waits for
// the coordinator would otherwise wait without a word: a plaintext worker
// dialling a TLS port, a certificate the coordinator does not accept, or
// the client port given for the worker port.
#ifndef NPUZZLE_WORKER_CONNECTION_HINT_H_
#define NPUZZLE_WORKER_CONNECTION_HINT_H_

#include <string>

#include "grpcpp/support/status.h"

namespace npuzzle {

struct WorkerSecurity {
  bool tls = false;                 // --tls-ca given
  bool client_certificate = false;  // --tls-cert given
};

// What to check, for a failed connection or session ("" when gRPC's
// message says it all, or there is nothing to suggest).
std::string ConnectionHint(const grpc::Status& status, WorkerSecurity security);

}  // namespace npuzzle

#endif  // NPUZZLE_WORKER_CONNECTION_HINT_H_
