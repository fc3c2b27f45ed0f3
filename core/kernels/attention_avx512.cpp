// attention_body.inc built for AVX-512 (and -ffp-contract=fast, see attention_avx2.cpp): tiles of
// 8 rows x 16 columns, a register a row. Nothing else here: it must not run on CPUs without
// AVX-512.
#include "kernels/kernels.h"

#define NOPE_KERNEL_ISA avx512
#include "kernels/attention_body.inc"
