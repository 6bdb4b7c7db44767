"""Engine-side decode step times under different client patterns, read from the face's timing keys (engine clock):
(request_finished_ts - prefill_finished_time) / (completion_tokens - 1). Used to check that the face and the way a
client reads answers do not change how fast the engine runs.

    python3 diagnose.py --url http://127.0.0.1:30000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
import urllib.request


def generate(url: str, ids: list[int], tokens: int, stream: bool) -> dict:
    body = json.dumps({"input_ids": ids, "sampling_params": {"max_new_tokens": tokens, "ignore_eos": True},
                       "stream": stream}).encode()
    request = urllib.request.Request(url + "/generate", data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        if not stream:
            return json.load(response)["meta_info"]
        last = None
        for line in response:
            line = line.strip()
            if line.startswith(b"data:") and line != b"data: [DONE]":
                last = line
        return json.loads(last[5:])["meta_info"]


def step_ms(meta: dict) -> float:
    return (meta["request_finished_ts"] - meta["prefill_finished_time"]) * 1000 / (meta["completion_tokens"] - 1)


def together(url: str, count: int, rounds: int, ids: list[int]) -> list[float]:
    """`count` identical requests sent at once, `rounds` times: a steady batch of `count` with no arrival mid-decode."""
    results: list[float] = []
    for _ in range(rounds):
        threads = [threading.Thread(target=lambda: results.append(step_ms(generate(url, ids, 48, True))))
                   for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return results


def open_loop(url: str, rate: float, seconds: float, stream: bool, rng: random.Random,
              fixed_len: int | None = None) -> list[float]:
    results: list[float] = []
    threads = []
    start = time.time()
    at = 0.0
    while at < seconds:
        at += rng.expovariate(rate)
        ids = [rng.randint(100, 30000) for _ in range(fixed_len or rng.randint(128, 512))]

        def worker(ids=ids) -> None:
            results.append(step_ms(generate(url, ids, 48, stream)))

        delay = start + at - time.time()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(target=worker)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:30000")
    parser.add_argument("--label", default="")
    parser.add_argument("--sequential", type=int, default=4, help="requests sent one after another")
    args = parser.parse_args()
    rng = random.Random(1)
    ids = [rng.randint(100, 30000) for _ in range(256)]
    generate(args.url, ids, 8, False)
    out = {}
    for stream in (True,):
        out[f"sequential stream={stream}"] = [step_ms(generate(args.url, ids, 48, stream))
                                              for _ in range(args.sequential)]
    out["together 5 x 4 rounds stream=True"] = together(args.url, 5, 4, ids)
    out["poisson 2.4/s len 256 stream=True"] = open_loop(args.url, 2.4, 12, True, rng, fixed_len=256)
    out["poisson 2.4/s stream=True"] = open_loop(args.url, 2.4, 12, True, rng)
    for name, values in out.items():
        print(f"{args.label} {name:32} engine ms/step median {statistics.median(values):7.2f}  "
              f"min {min(values):7.2f} max {max(values):7.2f} (n={len(values)})", flush=True)


if __name__ == "__main__":
    main()
