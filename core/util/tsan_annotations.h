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

namespace nope {

#ifdef NOPESCOPE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
inline void happensBefore(const void* key) {
    __tsan_release(const_cast<void*>(key));
}
inline void happensAfter(const void* key) {
    __tsan_acquire(const_cast<void*>(key));
}
#else
inline void happensBefore(const void*) {}
inline void happensAfter(const void*) {}
#endif

}  // namespace nope
