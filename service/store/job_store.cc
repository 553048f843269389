#include "service/store/job_store.h"

#include "absl/strings/str_cat.h"

namespace npuzzle {

std::string ShownId(const std::string& id) { return id.size() <= 64 ? id : id.substr(0, 64) + "..."; }

absl::Status NoSuchJob(const std::string& id) {
  return absl::NotFoundError(absl::StrCat("no job with id '", ShownId(id), "'"));
}

}  // namespace npuzzle
