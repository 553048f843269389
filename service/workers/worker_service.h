// WorkerServiceImpl: the internal gRPC endpoint workers dial. Each Connect
// stream becomes a WorkerLink for the JobManager: the first message must
// be the worker's hello, the rest are fed to the manager as they come, and
// the manager's messages are written back in order.
#ifndef NPUZZLE_SERVICE_WORKERS_WORKER_SERVICE_H_
#define NPUZZLE_SERVICE_WORKERS_WORKER_SERVICE_H_

#include "npuzzle/v1/worker.grpc.pb.h"
#include "service/jobs/job_manager.h"

namespace npuzzle {

class WorkerServiceImpl final : public v1::WorkerService::CallbackService {
 public:
  explicit WorkerServiceImpl(JobManager* manager) : manager_(manager) {}

  grpc::ServerBidiReactor<v1::WorkerMessage, v1::CoordinatorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  JobManager* const manager_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_WORKERS_WORKER_SERVICE_H_
