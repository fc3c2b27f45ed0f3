// LibTorch's CPU allocator replaced by one that keeps large freed blocks for the next tensor of
// the same size class. A training step allocates the same activations every step; glibc gave
// their memory back to the system between steps (blocks over 32 MiB are always mapped afresh, and
// a worker thread's arena unmaps a heap once it is empty), so each step faulted its activations
// in again: on a Zen 5 the quick shape's fp32 step ran 355 to 400 ms instead of 280
// (docs/performance.md). Torch-free.
#pragma once

#include <cstddef>

namespace nope {

// Installs the caching allocator as LibTorch's CPU allocator (once; later calls do nothing).
// Tensors allocated before keep their own deleters.
void installCachingCpuAllocator();

// False in an AddressSanitizer build, where install does nothing: a cached block would hide a
// use after free or an overflow into it from the sanitizer.
bool cachingCpuAllocatorBuilt();

// Blocks of at least this many bytes are cached when freed; smaller ones go back to malloc.
constexpr std::size_t kCachedBlockMinBytes = std::size_t(1) << 20;

// Bytes held in freed blocks waiting for reuse; a free beyond the limit goes back to malloc. The
// limit is a quarter of the memory, at most 8 GiB, and 0 (nothing cached) where malloc can fail
// for want of memory: under `ulimit -v` or `-d`, or the kernel's strict overcommit.
std::size_t cachedCpuBytes();
std::size_t cachedCpuBytesLimit();

// Gives every cached block back to malloc (an allocation that fails does this, then retries).
void releaseCachedCpuMemory();

}  // namespace nope
