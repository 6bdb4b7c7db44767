"""Times the Llama-3-8B shape's own GPU work (bf16, random data, CUDA graphs) and sets each coefficient of
profiles/llama-3-8b-h100.json beside the measurement.

    python3 gpu_bench.py [--json OUT.json]

What is timed (medians of CUDA-event timings over graph replays, after warm-up; 32 layers' distinct weights so that
nothing is served from L2):
  - dense decode step at T tokens: per layer QKV (4096 -> 6144), O (4096 -> 4096), gate+up (4096 -> 28672), down
    (14336 -> 4096), plus the LM head (4096 -> 128256) for the T sampled rows; captured in one CUDA graph.
  - dense prefill per token: the same GEMMs at 1024..4096 tokens, per token.
  - causal attention per (query, key) pair: scaled_dot_product_attention (flash) over one sequence of 2048/4096
    tokens, 32 query heads over 8 KV heads, x 32 layers.
  - decode attention per KV token read: one query per sequence over B sequences of L cached tokens, x 32 layers.
"""

from __future__ import annotations

import argparse
import json
import os

import torch
import torch.nn.functional as F

H, I, L, V, NH, NKV, D = 4096, 14336, 32, 128256, 32, 8, 128


def median_ms(fn, repeats: int = 30) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    layers = [dict(qkv=torch.randn(H, H + 2 * NKV * D, device=dev, dtype=dt) * 0.02,
                   o=torch.randn(H, H, device=dev, dtype=dt) * 0.02,
                   gu=torch.randn(H, 2 * I, device=dev, dtype=dt) * 0.02,
                   down=torch.randn(I, H, device=dev, dtype=dt) * 0.02) for _ in range(L)]
    head = torch.randn(H, V, device=dev, dtype=dt) * 0.02
    weight_bytes = sum(t.numel() * 2 for layer in layers for t in layer.values()) + head.numel() * 2

    def dense(x: torch.Tensor, sample_rows: int) -> torch.Tensor:
        for layer in layers:
            x = x + (x @ layer["qkv"])[:, :H] @ layer["o"]
            gu = x @ layer["gu"]
            x = x + (F.silu(gu[:, :I]) * gu[:, I:]) @ layer["down"]
        return x[-sample_rows:] @ head

    result: dict = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "weight_bytes": weight_bytes}
    # Memory bandwidth ceiling: a large device-to-device copy (bytes read + written).
    big = torch.empty(2 * 1024**3 // 2, device=dev, dtype=dt).normal_()
    dst = torch.empty_like(big)
    copy_ms = median_ms(lambda: dst.copy_(big), 10)
    result["copy_bandwidth_GBps"] = 2 * big.numel() * 2 / copy_ms / 1e6
    del big, dst

    decode = {}
    for tokens in [1, 8, 32, 64, 128, 256]:
        x = torch.randn(tokens, H, device=dev, dtype=dt)
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            dense(x, tokens)
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            dense(x, tokens)
        decode[tokens] = median_ms(graph.replay)
        del graph
    result["dense_decode_step_ms"] = decode

    prefill = {}
    for tokens in [1024, 2048, 4096]:
        x = torch.randn(tokens, H, device=dev, dtype=dt)
        prefill[tokens] = median_ms(lambda: dense(x, 1), 10) / tokens
    result["dense_prefill_ms_per_token"] = prefill

    attention = {}
    for seq in [2048, 4096]:
        q = torch.randn(1, NH, seq, D, device=dev, dtype=dt)
        k = torch.randn(1, NKV, seq, D, device=dev, dtype=dt)
        v = torch.randn(1, NKV, seq, D, device=dev, dtype=dt)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), 20) * L
        attention[seq] = ms / (seq * (seq + 1) / 2)
    result["prefill_attention_ms_per_pair"] = attention

    kv_read = {}
    for batch, length in [(32, 1024), (64, 2048), (128, 1024)]:
        q = torch.randn(batch, NH, 1, D, device=dev, dtype=dt)
        k = torch.randn(batch, NKV, length, D, device=dev, dtype=dt)
        v = torch.randn(batch, NKV, length, D, device=dev, dtype=dt)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), 20) * L
        kv_read[f"{batch}x{length}"] = ms / (batch * length)
    result["decode_kv_read_ms_per_token"] = kv_read

    profile = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "profiles", "llama-3-8b-h100.json")))
    c = profile["coefficients"]
    print(f"GPU {result['gpu']}; copy bandwidth {result['copy_bandwidth_GBps']:.0f} GB/s; weights {weight_bytes / 1e9:.2f} GB")
    print(f"{'coefficient':28}{'profile':>12}{'measured':>14}  note")
    floor = decode[1]
    print(f"{'overhead+floor (batch 1)':28}{c['stepOverheadMs'] + c['weightsFloorMs']:>12.3g}{floor:>14.3g}  dense decode step at 1 token (GPU only, graph)")
    print(f"{'weightsFloorMs':28}{c['weightsFloorMs']:>12.3g}{weight_bytes / result['copy_bandwidth_GBps'] / 1e6:>14.3g}  weights / copy bandwidth")
    per_seq = (decode[256] - decode[64]) / 192
    print(f"{'decodePerSequenceMs':28}{c['decodePerSequenceMs']:>12.3g}{per_seq:>14.3g}  slope of dense step 64 -> 256 tokens")
    print(f"{'prefillPerTokenMs':28}{c['prefillPerTokenMs']:>12.3g}{prefill[4096]:>14.3g}  dense prefill at 4096 tokens")
    print(f"{'prefillAttentionPerPairMs':28}{c['prefillAttentionPerPairMs']:>12.3g}{attention[4096]:>14.3g}  causal SDPA at 4096, x32 layers")
    kv = kv_read["64x2048"]
    print(f"{'kvReadPerTokenMs':28}{c['kvReadPerTokenMs']:>12.3g}{kv:>14.3g}  decode SDPA 64 seqs x 2048 KV, x32 layers")
    print(json.dumps(result))
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
