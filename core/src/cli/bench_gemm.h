// `hlm bench gemm`: the one-core GEMM peaks a benchmark's ratios belong to. A speed ratio
// against the peer is a property of the CPU (oneDNN's sgemm was 2x and 4-5x OpenBLAS's on the
// two machines in docs/benchmarks.md), so every benchmark prints these beside its results.
#pragma once

namespace hlm {

// Prints one JSON line: GFLOP/s on one thread for a 1024^3 product, the best over about
// 0.3 s each, of oneDNN float32 (hlm::gemm), OpenBLAS float32 (LibTorch's matmul), oneDNN
// bfloat16 (LibTorch's bfloat16 matmul, which runs on oneDNN) and OpenBLAS bfloat16
// (cblas_sbgemm, null when this OpenBLAS build has none).
int bench_gemm_command();

}  // namespace hlm
