#include "service/jobs/limit_policy.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/message_differencer.h"

namespace npuzzle {

absl::Status LimitPolicy::Apply(v1::JobSpec& spec) const {
  v1::Limits* l = spec.mutable_limits();
  if (l->max_nodes() == 0) l->set_max_nodes(defaults.max_nodes());
  if (l->max_time_ms() == 0) l->set_max_time_ms(defaults.max_time_ms());
  if (l->max_memory_mb() == 0) l->set_max_memory_mb(defaults.max_memory_mb());
  struct Check {
    const char* name;
    uint64_t value, ceiling;
  };
  for (const Check& k : {Check{"max_nodes", l->max_nodes(), ceilings.max_nodes()},
                         Check{"max_time_ms", l->max_time_ms(), ceilings.max_time_ms()},
                         Check{"max_memory_mb", l->max_memory_mb(), ceilings.max_memory_mb()}}) {
    if (k.ceiling != 0 && (k.value == 0 || k.value > k.ceiling)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("limits.%s %s exceeds this service's ceiling of %d", k.name,
                          k.value == 0 ? std::string("(unlimited)") : absl::StrCat(k.value), k.ceiling));
    }
  }
  if (spec.threads() > max_threads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("threads %d exceeds this service's ceiling of %d", spec.threads(), max_threads));
  }
  return absl::OkStatus();
}

bool SameRequest(v1::JobSpec submitted, v1::JobSpec stored) {
  // mutable_limits() on both: an absent Limits and an empty one are equal.
  v1::Limits* l = stored.mutable_limits();
  const v1::Limits& asked = *submitted.mutable_limits();
  if (asked.max_nodes() == 0) l->set_max_nodes(0);
  if (asked.max_time_ms() == 0) l->set_max_time_ms(0);
  if (asked.max_memory_mb() == 0) l->set_max_memory_mb(0);
  return google::protobuf::util::MessageDifferencer::Equals(submitted, stored);
}

}  // namespace npuzzle
