// ThreadSanitizer builds only. Debian's Abseil is not built with TSan, so
// TSan cannot see absl::Mutex's acquire and release, and reports every
// access guarded by one as a race; nor the order absl::Notification keeps
// between Notify and a wait that returns, which, when the notification was
// already given, goes through an atomic inside the library alone. This
// file, preloaded into TSan test processes, defines those classes'
// out-of-line entry points itself: each tells TSan what it does (the
// __tsan_mutex_* annotations an instrumented Abseil would make, or a
// release and an acquire) and calls the real one from the shared library,
// found with dlsym(RTLD_NEXT). The preloaded definitions take precedence
// over the library's, for calls from Abseil itself too.
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tests/tsan/next_definition.h"

extern "C" {
void __tsan_mutex_pre_lock(void* addr, unsigned flags);
void __tsan_mutex_post_lock(void* addr, unsigned flags, int recursion);
int __tsan_mutex_pre_unlock(void* addr, unsigned flags);
void __tsan_mutex_post_unlock(void* addr, unsigned flags);
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

constexpr unsigned kReadLock = 1 << 3;       // __tsan_mutex_read_lock
constexpr unsigned kTryLock = 1 << 4;        // __tsan_mutex_try_lock
constexpr unsigned kTryLockFailed = 1 << 5;  // __tsan_mutex_try_lock_failed

#define NPUZZLE_STRINGIZE2(x) #x
#define NPUZZLE_STRINGIZE(x) NPUZZLE_STRINGIZE2(x)

// The library's own definition of the member whose mangled name, after
// absl's inline namespace, is `member` (`kConst` for a const member).
enum Qualifier { kPlain, kConst };
template <typename F>
F Real(const char* member, Qualifier qualifier = kPlain) {
  const std::string ns = NPUZZLE_STRINGIZE(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string mangled =
      std::string(qualifier == kConst ? "_ZNK4absl" : "_ZN4absl") + std::to_string(ns.size()) + ns + member;
  return NextDefinition<F>(mangled.c_str(), "Abseil");
}

using PlainFn = void (*)(absl::Mutex*);
using TryFn = bool (*)(absl::Mutex*);
using AwaitFn = void (*)(absl::Mutex*, const absl::Condition&);
using AwaitForFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Duration);
using AwaitUntilFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Time);
using LockWhenFn = void (*)(absl::Mutex*, const absl::Condition&);
using WaitFn = void (*)(absl::CondVar*, absl::Mutex*);
using WaitForFn = bool (*)(absl::CondVar*, absl::Mutex*, absl::Duration);
using WaitUntilFn = bool (*)(absl::CondVar*, absl::Mutex*, absl::Time);
using NotifyFn = void (*)(absl::Notification*);
using NotifiedFn = void (*)(const absl::Notification*);
using NotifiedForFn = bool (*)(const absl::Notification*, absl::Duration);
using NotifiedUntilFn = bool (*)(const absl::Notification*, absl::Time);

// Abseil's entry points call one another (AwaitWithTimeout calls
// AwaitWithDeadline, through these definitions): only the outermost call
// is annotated.
thread_local int depth = 0;

// Runs `real` with TSan told, by `before` and `after`, what it does, unless
// this is a call from inside another entry point.
template <typename R, typename Before, typename After>
auto Annotated(R real, Before before, After after) {
  if (depth > 0) return real();
  ++depth;
  before();
  auto result = real();
  after(result);
  --depth;
  return result;
}

void Acquire(void* m, unsigned flags) {
  __tsan_mutex_pre_lock(m, flags);
  __tsan_mutex_post_lock(m, flags, 0);
}
// Taken for TSan when `call` returns true (the LockWhen family always
// holds the lock on return, even when its wait timed out).
template <typename F>
auto AcquiredBy(absl::Mutex* m, unsigned flags, F call) {
  return Annotated(
      call, [m, flags] { __tsan_mutex_pre_lock(m, flags); }, [m, flags](auto) { __tsan_mutex_post_lock(m, flags, 0); });
}

// Released for TSan before the call, taken again after: what Await does
// inside. The conditions it evaluates, in this thread or in another
// thread's Unlock, run while TSan ignores accesses.
template <typename F>
auto Released(absl::Mutex* m, F call) {
  return Annotated(
      call, [m] { __tsan_mutex_pre_unlock(m, 0); },
      [m](auto) {
        __tsan_mutex_post_unlock(m, 0);
        Acquire(m, 0);
      });
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<PlainFn>("5Mutex4LockEv");
  Annotated([&] { return real(this), 0; }, [this] { __tsan_mutex_pre_lock(this, 0); },
            [this](int) { __tsan_mutex_post_lock(this, 0, 0); });
}

void Mutex::Unlock() {
  static const auto real = Real<PlainFn>("5Mutex6UnlockEv");
  Annotated([&] { return real(this), 0; }, [this] { __tsan_mutex_pre_unlock(this, 0); },
            [this](int) { __tsan_mutex_post_unlock(this, 0); });
}

bool Mutex::TryLock() {
  static const auto real = Real<TryFn>("5Mutex7TryLockEv");
  return Annotated([&] { return real(this); }, [this] { __tsan_mutex_pre_lock(this, kTryLock); },
                   [this](bool locked) { __tsan_mutex_post_lock(this, kTryLock | (locked ? 0 : kTryLockFailed), 0); });
}

void Mutex::ReaderLock() {
  static const auto real = Real<PlainFn>("5Mutex10ReaderLockEv");
  Annotated([&] { return real(this), 0; }, [this] { __tsan_mutex_pre_lock(this, kReadLock); },
            [this](int) { __tsan_mutex_post_lock(this, kReadLock, 0); });
}

void Mutex::ReaderUnlock() {
  static const auto real = Real<PlainFn>("5Mutex12ReaderUnlockEv");
  Annotated([&] { return real(this), 0; }, [this] { __tsan_mutex_pre_unlock(this, kReadLock); },
            [this](int) { __tsan_mutex_post_unlock(this, kReadLock); });
}

void Mutex::Await(const Condition& cond) {
  static const auto real = Real<AwaitFn>("5Mutex5AwaitERKNS0_9ConditionE");
  Released(this, [&] { return real(this, cond), 0; });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = Real<AwaitForFn>("5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Released(this, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<AwaitUntilFn>("5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Released(this, [&] { return real(this, cond, deadline); });
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real = Real<LockWhenFn>("5Mutex8LockWhenERKNS0_9ConditionE");
  AcquiredBy(this, 0, [&] { return real(this, cond), 0; });
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = Real<AwaitForFn>("5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AcquiredBy(this, 0, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<AwaitUntilFn>("5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AcquiredBy(this, 0, [&] { return real(this, cond, deadline); });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real = Real<LockWhenFn>("5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  AcquiredBy(this, kReadLock, [&] { return real(this, cond), 0; });
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = Real<AwaitForFn>("5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AcquiredBy(this, kReadLock, [&] { return real(this, cond, timeout); });
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<AwaitUntilFn>("5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AcquiredBy(this, kReadLock, [&] { return real(this, cond, deadline); });
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = Real<WaitFn>("7CondVar4WaitEPNS0_5MutexE");
  Released(mu, [&] { return real(this, mu), 0; });
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = Real<WaitForFn>("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  return Released(mu, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = Real<WaitUntilFn>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  return Released(mu, [&] { return real(this, mu, deadline); });
}

// A wait that returns true saw Notify: it acquires what Notify released.
// (HasBeenNotified is inline, in instrumented code, but orders nothing
// here; none of our code reads what a notifier wrote on its word alone.)
void Notification::Notify() {
  static const auto real = Real<NotifyFn>("12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real = Real<NotifiedFn>("12Notification19WaitForNotificationEv", kConst);
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real = Real<NotifiedForFn>("12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", kConst);
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real = Real<NotifiedUntilFn>("12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", kConst);
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
