#include "util/runtime.h"

#include "model/gemm.h"
#include "util/cpu_allocator.h"

#include <malloc.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include <ATen/Context.h>
#include <ATen/Parallel.h>

namespace nope {

int availableCores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return CPU_COUNT(&set);
    }
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

void applyThreadCount(int threads) {
    at::set_num_threads(threads > 0 ? threads : availableCores());
    // Denormal floats cost a microcode assist per operation on x86. As attention sharpens during
    // training, softmax and its gradients produce them, and a step slowed down by a third in
    // measured runs. Flush them to zero on this thread (threads it starts inherit the setting)
    // and on every thread of its pool: one index per thread.
    at::globalContext().setFlushDenormal(true);
    at::parallel_for(0, at::get_num_threads(), 1,
                     [](int64_t, int64_t) { at::globalContext().setFlushDenormal(true); });
}

int loopThreads() {
    std::atomic<int> chunks{0};  // one chunk per thread of the loop
    at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) { ++chunks; });
    return chunks.load();
}

void configureRuntime(int threads) {
    // Keep freed memory in the heap: large blocks are reused by the next step instead of being
    // unmapped and faulted in again (32 MiB is glibc's largest mmap threshold on 64-bit).
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
    // and keep LibTorch's large blocks past what glibc keeps (util/cpu_allocator.h)
    installCachingCpuAllocator();
    applyThreadCount(threads);
    prepareSgemm();
}

}  // namespace nope
