// Process-wide settings that decide CPU speed here (measured: docs/performance.md):
//   - LibTorch's thread count, which this LibTorch build leaves at 1 unless told;
//   - glibc's malloc keeping large blocks instead of returning them to the system after every
//     step, which otherwise page-faults every activation of every training step, and LibTorch's
//     CPU allocator keeping the blocks glibc would still give back (util/cpu_allocator.h).
#pragma once

namespace nope {

// Number of cores this process may use.
int availableCores();

// How many threads the project's own at::parallel_for loops run on: LibTorch's thread count
// where the core library is compiled with OpenMP (CMakeLists.txt), 1 where it is not (the
// template runs its loop serially then, without a word).
int loopThreads();

// Call once at startup: tunes malloc, installs the caching CPU allocator, sets the thread count
// (0 = all cores) and has oneDNN generate its sgemm code (prepareSgemm, model/gemm.h).
void configureRuntime(int threads);

// Sets LibTorch's (and OpenMP's) thread count for the calling thread, and flushes denormal
// floats to zero on it and its pool: a worker thread must call it too, since OpenMP keeps the
// count per thread.
void applyThreadCount(int threads);

}  // namespace nope
