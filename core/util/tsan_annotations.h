// Happens-before annotations for ThreadSanitizer, for hand-offs through libraries it cannot see
// into: Debian's Qt is not instrumented, so a call queued to another thread's event loop orders
// the two threads' accesses without ThreadSanitizer knowing. The sender calls happensBefore(key)
// before queuing, the receiver happensAfter(key) when the call runs: everything the sender did
// before is then ordered before what the receiver does after. Nothing in other builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define NOPESCOPE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NOPESCOPE_TSAN 1
#endif
#endif

#ifdef NOPESCOPE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace nope {

inline void happensBefore(const void* key) {
#ifdef NOPESCOPE_TSAN
    __tsan_release(const_cast<void*>(key));
#else
    (void)key;
#endif
}

inline void happensAfter(const void* key) {
#ifdef NOPESCOPE_TSAN
    __tsan_acquire(const_cast<void*>(key));
#else
    (void)key;
#endif
}

}  // namespace nope
