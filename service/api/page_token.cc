#include "service/api/page_token.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace npuzzle {
namespace {

using Block = std::array<unsigned char, 16>;

std::array<unsigned char, SHA256_DIGEST_LENGTH> Sha256(const std::string& data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest;
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

// One block through AES-128, one way or the other. A single block with a
// plaintext that never repeats for a key needs no mode beyond ECB.
Block Cipher(const Block& key, const Block& in, bool encrypt) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  Block out{};
  int n = 0;
  EVP_CipherInit_ex(ctx.get(), EVP_aes_128_ecb(), nullptr, key.data(), nullptr, encrypt ? 1 : 0);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  EVP_CipherUpdate(ctx.get(), out.data(), &n, in.data(), static_cast<int>(in.size()));
  return out;
}

absl::Status NotOurs() {
  return absl::InvalidArgumentError("page_token is not one this service gave for this listing: start without one");
}

}  // namespace

PageTokens::PageTokens(const std::string& secret) : secret_(secret) {
  const auto digest = Sha256("npuzzle page tokens\n" + secret);
  std::memcpy(key_.data(), digest.data(), key_.size());
}

uint64_t PageTokens::TagOf(const std::string& tenant) const {
  const auto digest = Sha256("npuzzle page token tenant\n" + secret_ + "\n" + tenant);
  uint64_t tag;
  std::memcpy(&tag, digest.data(), sizeof(tag));
  return tag;
}

std::string PageTokens::Seal(const std::string& tenant, int64_t position) const {
  Block plain;
  const uint64_t tag = TagOf(tenant);
  std::memcpy(plain.data(), &position, 8);
  std::memcpy(plain.data() + 8, &tag, 8);
  const Block sealed = Cipher(key_, plain, true);
  return absl::WebSafeBase64Escape(absl::string_view(reinterpret_cast<const char*>(sealed.data()), sealed.size()));
}

absl::StatusOr<int64_t> PageTokens::Open(const std::string& tenant, const std::string& token) const {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw) || raw.size() != 16) return NotOurs();
  Block sealed;
  std::memcpy(sealed.data(), raw.data(), sealed.size());
  const Block plain = Cipher(key_, sealed, false);
  int64_t position;
  uint64_t tag;
  std::memcpy(&position, plain.data(), 8);
  std::memcpy(&tag, plain.data() + 8, 8);
  if (tag != TagOf(tenant) || position <= 0) return NotOurs();
  return position;
}

}  // namespace npuzzle
