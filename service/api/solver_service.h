// SolverServiceImpl: the public gRPC API (npuzzle.v1.SolverService), a
// thin layer over JobApi on gRPC's callback API, so thousands of watchers
// cost no threads.
#ifndef NPUZZLE_SERVICE_API_SOLVER_SERVICE_H_
#define NPUZZLE_SERVICE_API_SOLVER_SERVICE_H_

#include "npuzzle/v1/solver.grpc.pb.h"
#include "service/api/job_api.h"

namespace npuzzle {

class SolverServiceImpl final : public v1::SolverService::CallbackService {
 public:
  explicit SolverServiceImpl(JobApi* api) : api_(api) {}

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context, const v1::SubmitJobRequest* request,
                                      v1::Job* response) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* context,
                                                   const v1::WatchJobRequest* request) override;
  grpc::ServerWriteReactor<v1::JobEvent>* Solve(grpc::CallbackServerContext* context,
                                                const v1::SubmitJobRequest* request) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
                                   v1::Job* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context, const v1::CancelJobRequest* request,
                                      v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context, const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* DeleteJob(grpc::CallbackServerContext* context, const v1::DeleteJobRequest* request,
                                      v1::DeleteJobResponse* response) override;
  grpc::ServerUnaryReactor* RetryJob(grpc::CallbackServerContext* context, const v1::RetryJobRequest* request,
                                     v1::Job* response) override;

 private:
  absl::StatusOr<std::string> Caller(grpc::CallbackServerContext* context);

  JobApi* const api_;
};

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_SOLVER_SERVICE_H_
