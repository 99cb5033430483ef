// `hlm bench gemm`: the one-core GEMM peaks a benchmark's ratios belong to. A speed ratio
// against the peer is a property of the CPU, so every benchmark prints these beside its
// results.
#pragma once

namespace hlm {

// Prints one JSON line: GFLOP/s on one thread for a 1024^3 product through hlm::gemm (LibTorch's
// matmul: MKL in float32, oneDNN in bfloat16 in PyPI's wheel), the best over about 0.3 s each.
int bench_gemm_command();

}  // namespace hlm
