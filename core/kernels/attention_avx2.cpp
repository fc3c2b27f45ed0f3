// attention_body.inc built for AVX2 + FMA: tiles of 4 rows x 16 columns (two registers a row).
// A file of its own for -ffp-contract=fast (see core/CMakeLists.txt): the tiles' multiply-adds
// become fused ones, which the other kernels' files do not allow.
#include "kernels/kernels.h"

#define NOPE_KERNEL_ISA avx2
#include "kernels/attention_body.inc"
