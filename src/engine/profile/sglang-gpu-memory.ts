/**
 * SGLang's automatic settings for a GPU of `gpuMemoryMiB` (ServerArgs._handle_gpu_memory_settings in today's
 * python/sglang/srt/server_args.py), when the user gives neither --chunked-prefill-size nor --mem-fraction-static:
 * the chunk size and CUDA-graph batch bound by memory tier, then mem_fraction_static = (memory − reserved) / memory
 * with reserved = 512 MiB + 1.5 × max(chunk, 2048) + 2 × graph batch bound + tp × pp / 8 GiB (at least 10 GiB on GPUs
 * above 60 GiB), rounded to 3 decimals. Only the plain case: no speculative decoding, DP attention or piecewise graphs.
 */
export interface SglangGpuMemoryDefaults {
  chunkedPrefillSize: number;
  cudaGraphMaxBatchSize: number;
  memFractionStatic: number;
}

const GIB = 1024;

export function sglangGpuMemoryDefaults(gpuMemoryMiB: number, tpSize = 1, ppSize = 1): SglangGpuMemoryDefaults {
  let chunkedPrefillSize: number;
  let cudaGraphMaxBatchSize: number;
  if (gpuMemoryMiB < 20 * GIB) {
    chunkedPrefillSize = 2048;
    cudaGraphMaxBatchSize = 8;
  } else if (gpuMemoryMiB < 35 * GIB) {
    chunkedPrefillSize = 2048;
    cudaGraphMaxBatchSize = tpSize < 4 ? 24 : 80;
  } else if (gpuMemoryMiB < 60 * GIB) {
    chunkedPrefillSize = 4096;
    cudaGraphMaxBatchSize = tpSize < 4 ? 32 : 160;
  } else if (gpuMemoryMiB < 160 * GIB) {
    chunkedPrefillSize = 8192;
    cudaGraphMaxBatchSize = tpSize < 4 ? 256 : 512;
  } else {
    chunkedPrefillSize = 16384;
    cudaGraphMaxBatchSize = 512;
  }
  let reservedMiB = 512 + Math.max(chunkedPrefillSize, 2048) * 1.5 + cudaGraphMaxBatchSize * 2 + ((tpSize * ppSize) / 8) * GIB;
  if (gpuMemoryMiB > 60 * GIB) reservedMiB = Math.max(reservedMiB, 10 * GIB);
  const memFractionStatic = Math.round(((gpuMemoryMiB - reservedMiB) / gpuMemoryMiB) * 1000) / 1000;
  return { chunkedPrefillSize, cudaGraphMaxBatchSize, memFractionStatic };
}
