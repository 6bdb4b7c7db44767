"""Drives the whole comparison: real engine behind the face, servelab's calibration, node tests at several rates with
both protocols, the twin in virtual time on the same workloads and seeds, and one error table.

    python3 driver.py real  --servelab "node dist/src/cli/main.js" --out DIR [--engine transformers]
    python3 driver.py twin  --servelab "node dist/src/cli/main.js" --out DIR --profile FILE [--label NAME]
    python3 driver.py table --out DIR [--label NAME]

`real` needs the GPU (or --engine fake for a smoke test); `twin` and `table` run anywhere, on the files `real` left in
DIR (plan.json with the workload and capacity, the real runs' summary.json files), so a twin can be re-run and re-checked on a laptop.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
# The workload of the runs (plan.json keeps it, and the twin reads it from there): random token ids, prompts of
# 0.25-1 x HARNESS_INPUT_LEN tokens, HARNESS_OUTPUT_LEN tokens out, seed HARNESS_SEED.
WORKLOAD = ["--dataset-name", "random-ids", "--random-input-len", os.environ.get("HARNESS_INPUT_LEN", "512"),
            "--random-range-ratio", "0.25", "--random-output-len", os.environ.get("HARNESS_OUTPUT_LEN", "48"),
            "--seed", os.environ.get("HARNESS_SEED", "3"), "--warmup-requests", "2"]
# Shares of the burst's capacity the node tests run at, and their protocols (HARNESS_FRACTIONS="0.2,0.5,0.8,0.95",
# HARNESS_PROTOCOLS="sglang" to fit a shorter call).
FRACTIONS = [float(share) for share in os.environ.get("HARNESS_FRACTIONS", "0.2,0.5,0.8,1.1").split(",")]
PROTOCOLS = os.environ.get("HARNESS_PROTOCOLS", "sglang,openai-completions").split(",")
BURST_PROMPTS = int(os.environ.get("HARNESS_BURST_PROMPTS", "160"))
RUN_SECONDS = float(os.environ.get("HARNESS_RUN_SECONDS", "20"))
# Light-load runs last RUN_SECONDS at most a few dozen requests; their p90 wants more (HARNESS_MIN_PROMPTS).
MIN_PROMPTS = int(os.environ.get("HARNESS_MIN_PROMPTS", "40"))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def servelab(command: str, args: list[str], timeout: float = 900) -> None:
    full = shlex.split(command) + args
    log("$ servelab " + " ".join(shlex.quote(a) for a in args))
    subprocess.run(full, check=True, timeout=timeout)


def wait_ready(url: str, process: subprocess.Popen, limit_s: float) -> None:
    deadline = time.time() + limit_s
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the face exited with {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise SystemExit(f"the face was not ready within {limit_s} s")


def server_limits(url: str) -> dict:
    with urllib.request.urlopen(url + "/server_info", timeout=10) as response:
        return json.load(response)


def num_prompts(rate: float) -> int:
    return int(max(MIN_PROMPTS, min(240, rate * RUN_SECONDS)))


def node_test_args(workload: list[str], rate: float | None, protocol: str, prompts: int, out: str) -> list[str]:
    return ["node", *workload, "--protocol", protocol, "--request-rate", "inf" if rate is None else f"{rate:.4f}",
            "--num-prompts", str(prompts), "--output-dir", out, "--progress", "off", "--quiet"]


def twin_server_args(limits: dict, mixed_chunk: str = "on", chunked_prefill_size: int | None = None) -> list[str]:
    """The twin gets the engine's own limits: batch size, KV capacity, tokens per step, no prefix cache.

    transformers' continuous batching schedules every decoding request first (one token each) and fills the rest of
    its per-step token budget (max_batch_tokens, reported as chunked_prefill_size) with prompt chunks: that is SGLang's
    --enable-mixed-chunk with a chunk of max_batch_tokens, so the twin runs in that mode unless told otherwise."""
    chunk = chunked_prefill_size if chunked_prefill_size is not None else limits["chunked_prefill_size"]
    args = ["--max-running-requests", str(limits["max_running_requests"]), "--max-total-tokens",
            str(limits["max_total_tokens"]), "--chunked-prefill-size", str(chunk), "--disable-radix-cache"]
    if mixed_chunk == "on":
        args.append("--enable-mixed-chunk")
    return args


def real(args) -> None:
    os.makedirs(args.out, exist_ok=True)
    url = f"http://127.0.0.1:{args.port}"
    face_log = open(os.path.join(args.out, "face.log"), "w")
    face = subprocess.Popen([sys.executable, os.path.join(HERE, "face.py"), "--port", str(args.port), "--engine",
                             args.engine, "--request-log", os.path.join(args.out, "engine-requests.jsonl"),
                             "--engine-events", os.path.join(args.out, "engine-events.jsonl"),
                             *shlex.split(args.face_args)], stdout=face_log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    started = time.time()
    try:
        wait_ready(url, face, 600)
        log(f"face ready after {time.time() - started:.1f} s")
        limits = server_limits(url)
        json.dump(limits, open(os.path.join(args.out, "server_info.json"), "w"), indent=1)
        # Calibration first, on an idle engine (HARNESS_SKIP_CALIBRATION=1: runs only, to check a twin calibrated
        # earlier on another workload).
        calib = ["calibrate", "--url", url, "--output", os.path.join(args.out, "calibrated-roofline.json"),
                 "--measured-output", os.path.join(args.out, "calibrated-measured.json"),
                 "--measurements-output", os.path.join(args.out, "calibration-measurements.json"),
                 "--decode-tokens", "16", "--repeats", os.environ.get("HARNESS_CALIBRATE_REPEATS", "3"), "--max-batch", str(limits["max_running_requests"]),
                 # e.g. "--kv-prompt-lengths 32,512 --validation-seconds 12" (calibrate's own validation runs too)
                 "--validation-dir", os.path.join(args.out, "calibrate-validation"),
                 *shlex.split(os.environ.get("HARNESS_CALIBRATE_ARGS", ""))]
        if os.environ.get("HARNESS_SKIP_CALIBRATION") != "1":
            servelab(args.servelab, calib)
        # Capacity: every request at once.
        burst = os.path.join(args.out, "runs", "real-burst-sglang")
        burst_started = time.time()
        servelab(args.servelab, node_test_args(WORKLOAD, None, "sglang", BURST_PROMPTS, burst) + ["--target", "attach", "--url", url])
        capacity = read_summary(burst)["throughput"]["requestsPerSecond"]
        log(f"capacity (burst of {BURST_PROMPTS}): {capacity:.2f} req/s")
        plan = {"capacity_rps": capacity, "fractions": FRACTIONS, "protocols": PROTOCOLS, "workload": WORKLOAD,
                "burst_prompts": BURST_PROMPTS, "burst_started": burst_started, "burst_ended": time.time(), "runs": []}
        for fraction in FRACTIONS:
            rate = fraction * capacity
            for protocol in PROTOCOLS:
                name = f"real-{fraction:.2f}-{protocol}"
                prompts = num_prompts(rate)
                run_started = time.time()
                servelab(args.servelab, node_test_args(WORKLOAD, rate, protocol, prompts, os.path.join(args.out, "runs", name))
                         + ["--target", "attach", "--url", url])
                plan["runs"].append({"name": name, "fraction": fraction, "rate": rate, "protocol": protocol,
                                     "prompts": prompts, "started": run_started, "ended": time.time()})
                json.dump(plan, open(os.path.join(args.out, "plan.json"), "w"), indent=1)
        json.dump(plan, open(os.path.join(args.out, "plan.json"), "w"), indent=1)
    finally:
        os.killpg(face.pid, signal.SIGTERM)
        try:
            face.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(face.pid, signal.SIGKILL)


def twin(args) -> None:
    plan = json.load(open(os.path.join(args.out, "plan.json")))
    limits = json.load(open(os.path.join(args.out, "server_info.json")))
    # "profile" (the default): the profile alone, as calibrate's validation runs the twin; it carries the engine's
    # limits and the scheduling calibrate identified. "on"/"off": the limits as flags and the mixing forced.
    scheduler = [] if args.mixed_chunk == "profile" else twin_server_args(limits, args.mixed_chunk, args.chunked_prefill_size)
    extra = ["--target", "sim", "--virtual-time", "--twin-sensitivity", "off", "--profile", args.profile, *scheduler]
    runs = os.path.join(args.out, "runs")
    workload = plan["workload"]
    servelab(args.servelab, node_test_args(workload, None, "sglang", plan["burst_prompts"],
                                           os.path.join(runs, f"{args.label}-burst-sglang")) + extra)
    # The twin has no HTTP in virtual time, so it speaks SGLang's native protocol only: one twin run per rate stands
    # beside the real runs of both protocols (same workload, seed and arrivals).
    for run in plan["runs"]:
        if run["protocol"] != "sglang":
            continue
        servelab(args.servelab, node_test_args(workload, run["rate"], "sglang", run["prompts"],
                                               os.path.join(runs, twin_name_of(run["name"], args.label))) + extra)
    table(args)


def twin_name_of(real_name: str, label: str) -> str:
    return real_name.replace("real-", f"{label}-", 1).replace("openai-completions", "sglang")


def read_summary(directory: str) -> dict:
    return json.load(open(os.path.join(directory, "summary.json")))["metrics"]


# summary.json format 2 names (format 1's "ttft", "tpot", ... where a file from before it is read).
METRICS = [("TTFT p50", "ttftSeconds", "p50"), ("TTFT p90", "ttftSeconds", "p90"), ("TTFT p99", "ttftSeconds", "p99"),
           ("TPOT p50", "tpotSeconds", "p50"), ("TPOT p90", "tpotSeconds", "p90"),
           ("E2E p50", "totalLatencySeconds", "p50"), ("E2E p90", "totalLatencySeconds", "p90"),
           ("queue p90", "pureQueueTimeSeconds", "p90")]
FORMAT_1_NAMES = {"ttftSeconds": "ttft", "tpotSeconds": "tpot", "totalLatencySeconds": "total_latency",
                  "pureQueueTimeSeconds": "pure_queue_time"}


def latency(metrics: dict, key: str, stat: str):
    latencies = metrics["latencies"]
    entry = latencies.get(key) or latencies.get(FORMAT_1_NAMES.get(key, key)) or {}
    return entry.get(stat)


def table(args) -> None:
    plan = json.load(open(os.path.join(args.out, "plan.json")))
    runs = os.path.join(args.out, "runs")
    rows = []
    header = ["run", "metric", "real", "twin", "error %"]
    pairs = [("burst", "sglang", "real-burst-sglang", f"{args.label}-burst-sglang")]
    for run in plan["runs"]:
        pairs.append((f"{run['fraction']:.2f}x ({run['rate']:.2f} req/s)", run["protocol"], run["name"],
                      twin_name_of(run["name"], args.label)))
    for label, protocol, real_name, twin_name in pairs:
        try:
            real_m, twin_m = read_summary(os.path.join(runs, real_name)), read_summary(os.path.join(runs, twin_name))
        except FileNotFoundError:
            continue
        entries = [(name, latency(real_m, key, stat), latency(twin_m, key, stat), 1000.0) for name, key, stat in METRICS]
        entries.append(("throughput req/s", real_m["throughput"]["requestsPerSecond"], twin_m["throughput"]["requestsPerSecond"], 1.0))
        entries.append(("failed", real_m["counts"]["failed"], twin_m["counts"]["failed"], 1.0))
        for name, real_v, twin_v, scale in entries:
            if real_v is None or twin_v is None:
                rows.append([f"{label} {protocol}", name, "-" if real_v is None else f"{real_v * scale:.2f}",
                             "-" if twin_v is None else f"{twin_v * scale:.2f}", "-"])
                continue
            error = "-" if real_v == 0 else f"{(twin_v - real_v) / real_v * 100:+.1f}"
            rows.append([f"{label} {protocol}", name, f"{real_v * scale:.2f}", f"{twin_v * scale:.2f}", error])
    csv_path = os.path.join(args.out, f"error-table-{args.label}.csv")
    with open(csv_path, "w") as handle:
        handle.write(",".join(header) + "\n")
        for row in rows:
            handle.write(",".join(row) + "\n")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(f"\nReal engine vs twin ({args.label}); latencies in ms; capacity {plan['capacity_rps']:.2f} req/s")
    for row in [header] + rows:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    print(f"(also {csv_path})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=["real", "twin", "table"])
    parser.add_argument("--servelab", default="node dist/src/cli/main.js")
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--engine", default="transformers")
    parser.add_argument("--face-args", default="--cuda-graph on",
                        help="arguments for face.py; CUDA graphs on by default (without them the engine's step time depends on the arrival pattern: see README)")
    parser.add_argument("--profile")
    parser.add_argument("--label", default="twin")
    parser.add_argument("--mixed-chunk", choices=["profile", "on", "off"], default="profile",
                        help="twin: profile (default) takes the limits and scheduling the profile records; on/off give "
                             "the engine's limits as flags and force --enable-mixed-chunk on (prefill chunks share steps "
                             "with decoding) or off (SGLang's default, prefill pauses decoding)")
    parser.add_argument("--chunked-prefill-size", type=int,
                        help="twin: tokens per step (default: the engine's max_batch_tokens from server_info.json)")
    args = parser.parse_args()
    {"real": real, "twin": twin, "table": table}[args.phase](args)


if __name__ == "__main__":
    main()
