// The fuzz build's operator new: an allocation that cannot be satisfied throws std::bad_alloc, as
// it does in the normal build, instead of AddressSanitizer's report (whose throwing operator new
// cannot fail any other way). A damaged length field in a file can ask LibTorch's unpickler for
// 31 GB; the readers turn the std::bad_alloc into a message, and that path is what is fuzzed.
// Replaces AddressSanitizer's weak definitions; with ASAN_OPTIONS=allocator_may_return_null=1 the
// nothrow forms return null on such a request (scripts/fuzz.sh sets it).
#include <new>

void* operator new(std::size_t size) {
    if (void* p = ::operator new(size, std::nothrow)) {
        return p;
    }
    throw std::bad_alloc();
}

void* operator new[](std::size_t size) {
    if (void* p = ::operator new[](size, std::nothrow)) {
        return p;
    }
    throw std::bad_alloc();
}
