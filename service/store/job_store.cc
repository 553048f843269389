#include "service/store/job_store.h"

#include "absl/strings/str_cat.h"

namespace npuzzle {

std::string ShownId(const std::string& id) { return id.size() <= 64 ? id : id.substr(0, 64) + "..."; }

DerivedColumns DeriveColumns(const v1::Job& job) {
  DerivedColumns derived;
  if (job.has_finish_time()) {
    derived.finished = job.finish_time().seconds();
    if (job.spec().retain_seconds() > 0) derived.expires = derived.finished + job.spec().retain_seconds();
  }
  return derived;
}

std::string RequestKey(const std::string& tenant, const std::string& request_id) {
  return tenant.empty() ? request_id : absl::StrCat(tenant, "\n", request_id);
}

absl::Status NoSuchJob(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("no job with id '", ShownId(id), "'"));
}

}  // namespace npuzzle
