"""The engine's steps, one after another, rebuilt from the face's request log (`--request-log`): every token's engine
timestamp, grouped into steps (tokens within 3 ms of each other came out of one step), printed as `batch:ms` with `*`
where a request's first token came out (its prefill ended in that step). Shows whether one step shape runs at one speed
(as with CUDA graphs) or in stretches of different speeds (transformers' eager path, results/2026-11-26-graphs-off).

    python3 step_series.py requests.jsonl [--summary]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics


def steps_of(path: str, gap_s: float = 0.003) -> list[tuple[float, int, int, float]]:
    """(end time, tokens out, first tokens out, ms since the previous step's end) per step."""
    events = []
    with open(path) as log:
        for line in log:
            record = json.loads(line)
            events.extend((stamp, index) for index, stamp in enumerate(record["tokens"]))
    events.sort()
    groups: list[list[tuple[float, int]]] = []
    for event in events:
        if groups and event[0] - groups[-1][-1][0] <= gap_s:
            groups[-1].append(event)
        else:
            groups.append([event])
    return [(group[0][0], len(group), sum(1 for _, index in group if index == 0), (group[0][0] - before[0][0]) * 1000)
            for before, group in zip(groups, groups[1:])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request_log")
    parser.add_argument("--summary", action="store_true", help="per batch size and step kind: median, p10, p90")
    args = parser.parse_args()
    steps = steps_of(args.request_log)
    if not args.summary:
        print(" ".join(f"{batch}:{ms:.0f}{'*' if first else ''}" for _, batch, first, ms in steps))
        return
    by_shape = collections.defaultdict(list)
    for _, batch, first, ms in steps:
        if ms < 400:  # a gap between requests, not a step
            by_shape[(min(batch, 10), "prefill ends" if first else "decode")].append(ms)
    for (batch, kind), values in sorted(by_shape.items()):
        values.sort()
        if len(values) >= 5:
            print(f"batch {batch:2d}{'+' if batch == 10 else ' '} {kind:12} n={len(values):4d} median {statistics.median(values):6.1f} "
                  f"p10 {values[len(values) // 10]:6.1f} p90 {values[9 * len(values) // 10]:6.1f} ms")


if __name__ == "__main__":
    main()
