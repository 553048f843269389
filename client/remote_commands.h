// The commands that act on a server: solve and submit boards as jobs, and
// watch, get, cancel and list jobs. Each takes the command line and a
// Remote: the server's stub, and how to say what went wrong with a call.
#ifndef NPUZZLE_CLIENT_REMOTE_COMMANDS_H_
#define NPUZZLE_CLIENT_REMOTE_COMMANDS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli_flags.h"
#include "client/exit_codes.h"
#include "grpcpp/grpcpp.h"
#include "npuzzle/v1/solver.grpc.pb.h"

namespace npuzzle {

class Remote {
 public:
  // Dials --server with --tls-ca, --tls-server-name and --token
  // ($NPUZZLE_TOKEN); `command` names the command in messages.
  static absl::StatusOr<Remote> Dial(std::string command, const Invocation& in);

  v1::SolverService::Stub& stub() { return *stub_; }
  const std::string& command() const { return command_; }
  // Prints a failed call's error, with a hint at the setting to look at
  // when the error comes from TLS or tokens; returns kExitUsage.
  int Fail(const grpc::Status& s) const;
  // The same hint alone ("" when there is none).
  std::string Hint(const grpc::Status& s) const;

 private:
  Remote(std::string command, bool has_token, bool has_ca, std::unique_ptr<v1::SolverService::Stub> stub)
      : command_(std::move(command)), has_token_(has_token), has_ca_(has_ca), stub_(std::move(stub)) {}

  std::string command_;
  bool has_token_;
  bool has_ca_;
  std::unique_ptr<v1::SolverService::Stub> stub_;
};

// Each returns the exit status (client/exit_codes.h).
int SolveOnServer(const Invocation& in, Remote& at);
int Submit(const Invocation& in, Remote& at);
int Watch(const Invocation& in, Remote& at);
int Get(const Invocation& in, Remote& at);
int Cancel(const Invocation& in, Remote& at);
int Delete(const Invocation& in, Remote& at);
int List(const Invocation& in, Remote& at);
int Retry(const Invocation& in, Remote& at);

}  // namespace npuzzle

#endif  // NPUZZLE_CLIENT_REMOTE_COMMANDS_H_
