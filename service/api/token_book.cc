#include "service/api/token_book.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/log.h"

namespace npuzzle {
namespace {

// A tokens file is a short list; the bound keeps a wrong path from being
// read whole.
constexpr size_t kMaxFileBytes = 4 << 20;
constexpr int64_t kMaxQuota = 1'000'000'000;

bool IsHexDigest(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool IsTenantName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

absl::StatusOr<TokenBook::Entries> TokenBook::Parse(const std::string& path, const std::string& text) {
  Entries entries;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const std::vector<std::string> fields = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    const std::string where = absl::StrCat(path, " line ", number, ": ");
    if (fields.size() < 2 || fields.size() > 4) {
      return absl::InvalidArgumentError(where + "want TENANT SHA256-HEX-OF-TOKEN [max_queued=N] [max_running=N]");
    }
    if (!IsTenantName(fields[0])) {
      return absl::InvalidArgumentError(where + "a tenant is 1 to 64 of A-Z a-z 0-9 . _ -");
    }
    if (!IsHexDigest(fields[1])) {
      return absl::InvalidArgumentError(where + "the token's SHA-256 must be 64 hex digits (never the token itself)");
    }
    if (!entries.tenant_by_hash.emplace(absl::AsciiStrToLower(fields[1]), fields[0]).second) {
      return absl::InvalidArgumentError(where + "this token hash is listed twice");
    }
    if (fields.size() == 2) continue;
    TenantQuota quota{-1, -1};
    for (size_t i = 2; i < fields.size(); ++i) {
      const std::vector<std::string> setting = absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
      int64_t* field = setting[0] == "max_queued"    ? &quota.max_queued
                       : setting[0] == "max_running" ? &quota.max_running
                                                     : nullptr;
      int64_t value;
      if (field == nullptr || setting.size() != 2 || !absl::SimpleAtoi(setting[1], &value) || value < 0 ||
          value > kMaxQuota) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "'", fields[i], "': want max_queued=N or max_running=N, N from 0 (no limit) to ", kMaxQuota));
      }
      *field = value;
    }
    const auto [known, added] = entries.quotas.emplace(fields[0], quota);
    if (!added && (known->second.max_queued != quota.max_queued || known->second.max_running != quota.max_running)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "tenant ", fields[0], "'s quotas differ from an earlier line"));
    }
  }
  return entries;
}

TenantQuota TokenBook::QuotaOf(const std::string& tenant, const TenantQuota& defaults) {
  absl::MutexLock lock(&mu_);
  TenantQuota quota = defaults;
  if (auto it = entries_.quotas.find(tenant); it != entries_.quotas.end()) {
    if (it->second.max_queued >= 0) quota.max_queued = it->second.max_queued;
    if (it->second.max_running >= 0) quota.max_running = it->second.max_running;
  }
  return quota;
}

absl::StatusOr<std::unique_ptr<TokenBook>> TokenBook::Open(const std::string& path, absl::Duration recheck) {
  std::unique_ptr<TokenBook> book(new TokenBook(path, recheck));
  if (absl::Status s = book->Reload(); !s.ok()) return s;
  absl::MutexLock lock(&book->mu_);
  if (book->entries_.tenant_by_hash.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--auth-tokens ", path, ": no tokens in the file"));
  }
  return book;
}

absl::Status TokenBook::Reload() {
  absl::MutexLock reloading(&reload_mu_);
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("--auth-tokens ", path_, ": cannot read the file"));
  }
  if (st.st_size == size_ && st.st_mtim.tv_sec == mtime_.tv_sec && st.st_mtim.tv_nsec == mtime_.tv_nsec) {
    return absl::OkStatus();
  }
  if (static_cast<size_t>(st.st_size) > kMaxFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat("--auth-tokens ", path_, ": larger than 4 MiB"));
  }
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::NotFoundError(absl::StrCat("--auth-tokens ", path_, ": cannot read the file"));
  absl::StatusOr<Entries> parsed = Parse(path_, text.str());
  // Remembered even when refused, so a bad file is reported once, not on
  // every call.
  mtime_ = st.st_mtim;
  size_ = st.st_size;
  if (!parsed.ok()) return parsed.status();
  const size_t tokens = parsed->tenant_by_hash.size();
  bool first;
  {
    absl::MutexLock lock(&mu_);
    first = entries_.tenant_by_hash.empty();
    entries_ = *std::move(parsed);
  }
  if (!first) Log(absl::StrCat("re-read ", path_, ": ", tokens, " tokens"));
  return absl::OkStatus();
}

void TokenBook::MaybeReload() {
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    if (now < next_check_) return;
    // One caller checks; the others go on with the tokens in force.
    next_check_ = now + recheck_;
  }
  if (absl::Status s = Reload(); !s.ok()) Log(absl::StrCat(s.message(), "; the tokens read before stay in force"));
}

absl::StatusOr<std::string> TokenBook::TenantOf(const std::string* authorization) {
  constexpr absl::string_view kScheme = "Bearer ";
  if (authorization == nullptr) {
    return absl::UnauthenticatedError("this server wants a bearer token (authorization: Bearer TOKEN)");
  }
  absl::string_view token = *authorization;
  if (!absl::ConsumePrefix(&token, kScheme) || token.empty()) {
    return absl::UnauthenticatedError("the authorization header must be \"Bearer TOKEN\"");
  }
  const std::string hash = Sha256Hex(std::string(token));
  MaybeReload();
  absl::MutexLock lock(&mu_);
  auto it = entries_.tenant_by_hash.find(hash);
  if (it == entries_.tenant_by_hash.end()) return absl::UnauthenticatedError("unknown token");
  return it->second;
}

}  // namespace npuzzle
