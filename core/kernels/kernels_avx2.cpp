// Built with -mavx2 -mfma -O3 -fno-trapping-math (see core/CMakeLists.txt): the loops of
// gelu_body.inc and dropout_body.inc vectorized 8 floats wide. Measured on 3.1M values, one
// thread: GELU about 4.4 ms against 70 ms for the same source built for baseline x86-64. Also the
// CPU checks and the choice between this build and the AVX-512 one.
#include "kernels/kernels.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#include <xmmintrin.h>
#endif

#define NOPE_KERNEL_ISA avx2
#include "kernels/dropout_body.inc"
#include "kernels/gelu_body.inc"
#include "kernels/layer_norm_body.inc"
#include "kernels/round_body.inc"

namespace nope::kernels {

bool cpuHasAvx2Fma() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

// Here, not in kernels_avx512.cpp: the check must run on CPUs without AVX-512.
bool cpuHasAvx512() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
    return false;
#endif
}

namespace {

struct Bf16Bits {
    bool avx512Bf16 = false, amxBf16 = false;
};

Bf16Bits bf16Bits() {
    Bf16Bits bits;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        return bits;
    }
    bits.amxBf16 = (edx >> 22) & 1u;  // leaf 7.0, EDX bit 22
    const unsigned maxSubleaf = eax;
    if (maxSubleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
        bits.avx512Bf16 = ((eax >> 5) & 1u) && cpuHasAvx512();  // leaf 7.1, EAX bit 5
    }
#endif
    return bits;
}

}  // namespace

bool cpuHasBf16Products() {
    const Bf16Bits bits = bf16Bits();
    return bits.amxBf16 || bits.avx512Bf16;
}

bool cpuHasAvx512Bf16() {
    return bf16Bits().avx512Bf16;
}

// The kernels of one build, in the order of Kernels' members.
#define NOPE_KERNELS_OF(isa)                                                                \
    Kernels {                                                                               \
        isa::geluForward, isa::geluBackward, isa::geluForwardBf16, isa::geluBackwardBf16,   \
            isa::geluSlope, isa::geluForwardBf16Lookup, isa::geluBackwardBf16Lookup,        \
            isa::dropoutMask, isa::dropoutMaskBf16, isa::roundToBf16, isa::residualAddBf16, \
            isa::addNarrowBf16, isa::layerNormForwardBf16, isa::layerNormBackwardBf16,      \
            isa::layerNormForward, isa::layerNormBackward, isa::attentionForward,           \
            isa::attentionForwardBf16, isa::attentionBackward, isa::attentionBackwardBf16   \
    }

const Kernels& selected() {
    static const Kernels chosen = [] {
        Kernels k = cpuHasAvx512() ? NOPE_KERNELS_OF(avx512) : NOPE_KERNELS_OF(avx2);
        if (cpuHasAvx512Bf16()) {
            k.attentionForwardBf16 = avx512::attentionForwardBf16Dot;
            k.attentionBackwardBf16 = avx512::attentionBackwardBf16Dot;
        }
        return k;
    }();
    return chosen;
}

FlushSubnormals::FlushSubnormals() : m_saved(_mm_getcsr()) {
    _mm_setcsr(m_saved | 0x8040u);  // bits 15 (flush-to-zero) and 6 (denormals-are-zero)
}

FlushSubnormals::~FlushSubnormals() {
    _mm_setcsr(m_saved);
}

const GeluBf16Tables& geluBf16Tables() {
    static const GeluBf16Tables* const tables = [] {
        auto* t = new GeluBf16Tables;  // kept for the program's life
        const int64_t n = 65536;
        auto* bits = new uint16_t[n];  // no <vector>: nothing inline built for AVX2 (kernels.h)
        auto* widened = new float[n];
        for (int64_t v = 0; v < n; ++v) {
            bits[v] = static_cast<uint16_t>(v);
            const uint32_t word = static_cast<uint32_t>(v) << 16;
            std::memcpy(&widened[v], &word, sizeof word);
        }
        {
            const FlushSubnormals flush;  // as the program's threads compute
            const Kernels& k = selected();
            k.geluForwardBf16(bits, t->values, n);
            k.geluSlope(widened, t->slopes, n);
        }
        delete[] bits;
        delete[] widened;
        return t;
    }();
    return *tables;
}

#undef NOPE_KERNELS_OF

}  // namespace nope::kernels
