#include "util/cpu_allocator.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

namespace nope {

namespace {

// Every block starts with a header of one alignment unit holding its size class (0 for a block
// that is not cached), so that the raw deleter LibTorch and oneDNN call with the data pointer
// alone can put it back.
constexpr std::size_t kAlignment = 64;

// Size classes: eight per power of two, so a block is at most 12.5% larger than asked for.
std::size_t sizeClass(std::size_t bytes) {
    if (bytes < kCachedBlockMinBytes) {
        return 0;
    }
    std::size_t power = kCachedBlockMinBytes;
    while (power * 2 <= bytes) {
        power *= 2;
    }
    const std::size_t step = power / 8;
    return (bytes + step - 1) / step * step;
}

// Whether malloc can fail for want of memory in this process: a limit on its address space or
// data (`ulimit -v`, `ulimit -d`), or the kernel's strict overcommit. There memory held in the
// cache is memory other code cannot get, and some of that code does not survive a failed malloc
// (OpenBLAS's buffer allocation retries forever: a test under `ulimit -v` hung in it), so the
// cache stays empty. Elsewhere the kernel overcommits, and a process short of memory is stopped
// by it rather than told.
bool mallocCanFail() {
    for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
        rlimit limit{};
        if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
            return true;
        }
    }
    std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
    int mode = 0;
    return overcommit >> mode && mode == 2;
}

struct Cache {
    std::mutex mutex;
    std::map<std::size_t, std::vector<void*>> free;  // size class -> blocks (their headers)
    std::size_t bytes = 0;
    std::size_t limit = 0;
};

Cache& cache() {
    static Cache* const kCache = [] {
        auto* c = new Cache;  // never destroyed: tensors may be freed during exit
        const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
        const std::size_t physical =
            pages > 0 && pageSize > 0 ? std::size_t(pages) * std::size_t(pageSize) : 0;
        // a quarter of the memory, at most 8 GiB: a step's activations with room for the
        // evaluation's and analysis' own sizes
        c->limit = std::min<std::size_t>(physical / 4, std::size_t(8) << 30);
        if (mallocCanFail()) {
            c->limit = 0;  // every freed block goes back to malloc, as without the cache
        }
        return c;
    }();
    return *kCache;
}

void* header(void* data) {
    return static_cast<char*>(data) - kAlignment;
}

void* systemAllocate(std::size_t total) {
    void* block = nullptr;
    if (posix_memalign(&block, kAlignment, total) != 0) {
        return nullptr;
    }
    return block;
}

void* allocateBlock(std::size_t bytes) {
    const std::size_t cls = sizeClass(bytes);
    if (cls != 0) {
        Cache& c = cache();
        const std::lock_guard<std::mutex> lock(c.mutex);
        auto it = c.free.find(cls);
        if (it != c.free.end() && !it->second.empty()) {
            void* block = it->second.back();
            it->second.pop_back();
            c.bytes -= cls;
            return static_cast<char*>(block) + kAlignment;
        }
    }
    const std::size_t total = (cls != 0 ? cls : bytes) + kAlignment;
    void* block = systemAllocate(total);
    if (block == nullptr && cls != 0) {
        releaseCachedCpuMemory();
        block = systemAllocate(total);
    }
    if (block == nullptr) {
        throw std::bad_alloc();  // LibTorch's own allocator reports this as out of memory too
    }
    *static_cast<std::size_t*>(block) = cls;
    return static_cast<char*>(block) + kAlignment;
}

void releaseBlock(void* data) {
    if (data == nullptr) {
        return;
    }
    void* block = header(data);
    const std::size_t cls = *static_cast<std::size_t*>(block);
    if (cls != 0) {
        Cache& c = cache();
        const std::lock_guard<std::mutex> lock(c.mutex);
        if (c.bytes + cls <= c.limit) {
            try {
                c.free[cls].push_back(block);
                c.bytes += cls;
                return;
            } catch (const std::bad_alloc&) {  // a deleter must not throw: free it instead
            }
        }
    }
    std::free(block);
}

class CachingCpuAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) const override {
        void* data = bytes == 0 ? nullptr : allocateBlock(bytes);
        return {data, data, &releaseBlock, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &releaseBlock; }
};

}  // namespace

bool cachingCpuAllocatorBuilt() {
#if defined(__SANITIZE_ADDRESS__)
    return false;
#else
    return true;
#endif
}

void installCachingCpuAllocator() {
    if (!cachingCpuAllocatorBuilt()) {
        return;
    }
    static const bool kInstalled = [] {
        // never destroyed, as the cache: LibTorch holds it to the end of the process; priority
        // above the default allocator's (0), so that it replaces it
        c10::SetCPUAllocator(new CachingCpuAllocator, /*priority=*/1);
        return true;
    }();
    (void)kInstalled;
}

std::size_t cachedCpuBytes() {
    Cache& c = cache();
    const std::lock_guard<std::mutex> lock(c.mutex);
    return c.bytes;
}

std::size_t cachedCpuBytesLimit() {
    return cache().limit;
}

void releaseCachedCpuMemory() {
    std::vector<void*> blocks;
    {
        Cache& c = cache();
        const std::lock_guard<std::mutex> lock(c.mutex);
        for (auto& [cls, list] : c.free) {
            blocks.insert(blocks.end(), list.begin(), list.end());
        }
        c.free.clear();
        c.bytes = 0;
    }
    for (void* block : blocks) {
        std::free(block);
    }
}

}  // namespace nope
