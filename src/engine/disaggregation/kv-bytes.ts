/**
 * The KV cache's size per token, from a model's shape: a key and a value vector (the 2) for every layer and every KV
 * head, each `headDim` elements. SGLang's KV pool for multi-head attention keeps one K and one V buffer per layer of
 * (tokens x KV heads x head dim) elements (python/sglang/srt/mem_cache/memory_pool.py), and its PD transfer backends
 * move those buffers' pages of a request from the prefill server's pool to the decode server's
 * (python/sglang/srt/disaggregation/mooncake/conn.py). MLA models (DeepSeek) keep one latent vector instead: not this formula.
 */
export interface KvCacheShape {
  layers: number;
  /** KV heads per server (after tensor parallelism splits them; grouped-query attention has fewer KV than query heads). */
  kvHeads: number;
  headDim: number;
  /** 2 for bf16/fp16, 1 for an fp8 KV cache. */
  bytesPerElement: number;
}

/** Bytes of KV cache one token holds: 2 x layers x KV heads x head dim x bytes per element. */
export function kvBytesPerToken(shape: KvCacheShape): number {
  return 2 * shape.layers * shape.kvHeads * shape.headDim * shape.bytesPerElement;
}
