"""Where a measured profile's step prices part from the engine's: rebuilds the engine's steps from the face's request
log and prices each with the profile's table, grouped by batch size, step kind and KV tokens.

    python3 step_diagnosis.py --out DIR --profile FILE [--run burst|real-0.80-sglang|...]

DIR is what `driver.py real` left (plan.json, server_info.json, engine-requests.jsonl). The engine emits one token per
running request at the end of each step, so token times that fall within 3 ms of each other are one step, and a step
lasts from the step before it to its own tokens. What the log does not say is how many prompt tokens a step
prefilled: they are reconstructed the way transformers' FIFO scheduler fills a step (decode tokens first, then the
oldest prompts' chunks up to max_batch_tokens), so a step's prefill count is an estimate; batch size and KV tokens
(prompt + tokens so far of each decoding request) are read from the log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections import defaultdict


def locate(axis: list[float], value: float) -> tuple[int, float]:
    if len(axis) == 1 or value <= axis[0]:
        return 0, 0.0
    index = 0
    while index < len(axis) - 2 and value > axis[index + 1]:
        index += 1
    return index, (value - axis[index]) / (axis[index + 1] - axis[index])


def table_step_ms(table: dict, batch: int, prefill: int, kv: int) -> float:
    """The same multilinear interpolation as servelab's MeasuredTableCostModel (src/engine/profile/measured-table.ts)."""
    axes = [locate(table["decodeSequences"], batch), locate(table["prefillTokens"], prefill), locate(table["kvTokens"], kv)]
    total = 0.0
    for da in (0, 1):
        for db in (0, 1):
            for dc in (0, 1):
                weight = 1.0
                for (index, w), d in zip(axes, (da, db, dc)):
                    weight *= w if d else 1 - w
                if weight == 0:
                    continue
                total += weight * table["stepMs"][axes[0][0] + da][axes[1][0] + db][axes[2][0] + dc]
    return max(0.0, total)


def run_window(plan: dict, run: str) -> tuple[float, float]:
    if run == "burst":
        return plan["burst_started"], plan["burst_ended"]
    for entry in plan["runs"]:
        if entry["name"] == run:
            return entry["started"], entry["ended"]
    raise SystemExit(f"no run named {run} in plan.json; runs: burst, " + ", ".join(r["name"] for r in plan["runs"]))


def rebuild_steps(requests: list[dict], step_budget: int) -> list[dict]:
    events = sorted((time, index, request) for request in requests for index, time in enumerate(request["tokens"]))
    steps: list[dict] = []
    for time, index, request in events:
        if steps and time - steps[-1]["time"] < 0.003:
            steps[-1]["tokens"].append((index, request))
        else:
            steps.append({"time": time, "tokens": [(index, request)]})
    remaining = {request["rid"]: request["prompt_tokens"] for request in requests}
    by_admission = sorted(requests, key=lambda r: r["left_queue"])
    rebuilt = []
    for previous, step in zip(steps, steps[1:]):
        decoding = [(index, request) for index, request in step["tokens"] if index > 0]
        budget = step_budget - len(decoding)
        prefill = 0
        # Prompts admitted before this step and not yet through their prefill, oldest first.
        for request in by_admission:
            if budget <= 0:
                break
            if request["left_queue"] <= step["time"] and remaining[request["rid"]] > 0 and request["tokens"][0] >= step["time"]:
                chunk = min(budget, remaining[request["rid"]])
                remaining[request["rid"]] -= chunk
                prefill += chunk
                budget -= chunk
        rebuilt.append({"ms": (step["time"] - previous["time"]) * 1000, "batch": len(decoding), "prefill": prefill,
                        "kv": sum(request["prompt_tokens"] + index for index, request in decoding)})
    return rebuilt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--profile", required=True, help="a measured profile (kind 'measured')")
    parser.add_argument("--run", default="burst")
    args = parser.parse_args()
    profile = json.load(open(args.profile))
    if profile.get("kind") != "measured":
        raise SystemExit(f"{args.profile} is a {profile.get('kind')!r} profile; this reads measured tables only")
    plan = json.load(open(os.path.join(args.out, "plan.json")))
    limits = json.load(open(os.path.join(args.out, "server_info.json")))
    started, ended = run_window(plan, args.run)
    requests = [json.loads(line) for line in open(os.path.join(args.out, "engine-requests.jsonl"))]
    requests = [r for r in requests if started <= r["arrival"] <= ended and r["tokens"]]
    steps = rebuild_steps(requests, limits["chunked_prefill_size"])
    groups: dict[tuple[int, str, int], list[tuple[float, float]]] = defaultdict(list)
    for step in steps:
        priced = table_step_ms(profile["table"], step["batch"], step["prefill"], step["kv"])
        key = (min(64, -(-step["batch"] // 8) * 8), "mixed" if step["prefill"] and step["batch"] else
               ("prefill" if step["prefill"] else "decode"), step["kv"] // 8192 * 8)
        groups[key].append((step["ms"], priced))
    real_s = sum(s["ms"] for s in steps) / 1000
    priced_s = sum(p for group in groups.values() for _, p in group) / 1000
    print(f"{args.run}: {len(steps)} steps; the engine took {real_s:.1f} s, the table prices them at {priced_s:.1f} s")
    print(f"{'batch <=':>8} {'kind':>8} {'KV (k)':>7} {'steps':>6} {'engine ms':>10} {'table ms':>9} {'error %':>8}")
    for (batch, kind, kv), group in sorted(groups.items()):
        real = statistics.median(ms for ms, _ in group)
        priced = statistics.median(p for _, p in group)
        print(f"{batch:>8} {kind:>8} {f'{kv}-{kv + 8}':>7} {len(group):>6} {real:>10.1f} {priced:>9.1f} {(priced - real) / real * 100:>+8.1f}")
    # What stalled the engine's loop in this run (face.py --engine-events): lazy graph captures, long collections.
    events_path = os.path.join(args.out, "engine-events.jsonl")
    if os.path.exists(events_path):
        events = [json.loads(line) for line in open(events_path)]
        stalls = [e for e in events if e["event"] in ("graph_capture", "gc") and started <= e["time"] <= ended]
        for kind in ("graph_capture", "gc"):
            chosen = [e for e in stalls if e["event"] == kind]
            print(f"{kind}: {len(chosen)} in this run, {sum(e['ms'] for e in chosen):.0f} ms in all"
                  + (f"; keys {[e.get('key') for e in chosen][:6]}" if kind == "graph_capture" and chosen else ""))


if __name__ == "__main__":
    main()
