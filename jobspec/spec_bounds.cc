#include "jobspec/spec_bounds.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace npuzzle {
namespace {

bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// Kubernetes' label-key form: an optional DNS-subdomain prefix and '/',
// then a name of letters, digits, '-', '_' and '.', starting and ending
// with a letter or digit.
bool IsLabelKey(absl::string_view key) {
  absl::string_view name = key;
  if (const size_t slash = key.find('/'); slash != absl::string_view::npos) {
    const absl::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty() || !IsAlnum(prefix.front()) || !IsAlnum(prefix.back())) return false;
    for (char c : prefix) {
      if (!(absl::ascii_islower(static_cast<unsigned char>(c)) || absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
            c == '-' || c == '.')) {
        return false;
      }
    }
  }
  if (name.empty() || !IsAlnum(name.front()) || !IsAlnum(name.back())) return false;
  for (char c : name) {
    if (!(IsAlnum(c) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

template <class Labels>
absl::Status CheckLabels(const Labels& labels, absl::string_view field) {
  if (labels.size() > static_cast<size_t>(kMaxLabels)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " has ", labels.size(), " entries; at most ", kMaxLabels, " are allowed"));
  }
  for (const auto& [key, value] : labels) {
    if (key.size() > kMaxLabelKeyBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": a key of ", key.size(), " bytes is longer than ", kMaxLabelKeyBytes, " bytes"));
    }
    if (!IsLabelKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": key '", key,
          "' is not a label key (letters, digits, '-', '_', '.', starting and ending with a letter or digit, "
          "optionally after a lowercase domain prefix and '/')"));
    }
    if (value.size() > kMaxLabelValueBytes) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": the value of '", key, "' has ", value.size(),
                                                     " bytes; at most ", kMaxLabelValueBytes, " are allowed"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSpecBounds(const v1::JobSpec& spec) {
  if (absl::Status s = CheckLabels(spec.labels(), "labels"); !s.ok()) return s;
  if (spec.request_id().size() > kMaxRequestIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("request_id has ", spec.request_id().size(), " bytes; at most ",
                                                   kMaxRequestIdBytes, " are allowed"));
  }
  if (spec.priority() > kMaxPriority || spec.priority() < -kMaxPriority) {
    return absl::InvalidArgumentError(
        absl::StrCat("priority ", spec.priority(), " is out of range (-", kMaxPriority, " to ", kMaxPriority, ")"));
  }
  if (spec.retain_seconds() < 0 || spec.retain_seconds() > kMaxRetainSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("retain_seconds ", spec.retain_seconds(), " is out of range (0 to ",
                                                   kMaxRetainSeconds, ", 10 years)"));
  }
  return absl::OkStatus();
}

absl::Status CheckLabelFilter(const std::map<std::string, std::string>& labels) {
  return CheckLabels(labels, "label filter");
}

absl::Status CheckJobId(absl::string_view id) {
  if (id.empty()) return absl::InvalidArgumentError("job_id is empty");
  if (id.size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("job_id has ", id.size(), " bytes; job ids have at most ", kMaxJobIdBytes));
  }
  for (char c : id) {
    if (!(IsAlnum(c) || c == '-' || c == '_' || c == '.')) {
      return absl::InvalidArgumentError(
          "job_id holds characters no job id has (ids are letters, digits, '-', '_' and '.')");
    }
  }
  return absl::OkStatus();
}

}  // namespace npuzzle
