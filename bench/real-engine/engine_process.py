"""The engine process: a continuous-batching engine this project did not write, run apart from the HTTP face.

SGLang splits its HTTP/tokenizer process from its scheduler process so that JSON work never holds the GIL of the
generation loop; this harness does the same. The face (face.py) starts this module's `serve` in a child process and
talks to it over two multiprocessing queues:

  to the engine:   ("add", rid, input_ids, max_new_tokens) | ("cancel", rid) | ("stop",)
  from the engine: ("ready", info) | ("events", [event, ...]) | ("fatal", message)
  event:           (rid, kind, payload) with kind "tokens" (new ids, the newest token's time) or "done"/"error".

Every time sent back is the engine's own request state (transformers' RequestState: created_time when the request
reached the engine, lifespan[0] when it left the queue, per-token timestamps, lifespan[1] when it finished), turned
from the engine's perf_counter clock into epoch seconds with one offset read at start, so the face adds no time of its
own to the timing keys.

Two engines: "transformers" (the real one: Hugging Face transformers' continuous batching on a randomly initialised
Llama-3-8B-shaped model, bf16, nothing downloaded) and "fake" (a tiny pure-Python stand-in with the same queue protocol
and fixed step times, only so that the face can be smoke-tested on a machine without torch).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
import traceback
from dataclasses import dataclass

LLAMA_3_8B_SHAPE = dict(
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    vocab_size=128256,
    max_position_embeddings=8192,
    rope_theta=500000.0,
    rms_norm_eps=1e-5,
    tie_word_embeddings=False,
)


@dataclass
class EngineSettings:
    engine: str = "transformers"
    block_size: int = 256
    num_blocks: int = 256
    max_batch_tokens: int = 1024
    max_requests_per_batch: int = 64
    use_cuda_graph: bool | None = None
    attn_implementation: str | None = None
    num_layers: int = 32
    seed: int = 0
    torch_threads: int = 0
    fake_step_ms: float = 5.0
    fake_prefill_ms_per_token: float = 0.01
    # "full": capture a CUDA graph for every padded step shape before serving (see _capture_every_shape);
    # "engine": only transformers' own warmup (one varlen graph), the rest captured lazily while serving.
    graph_warmup: str = "full"
    # The full warmup captures graphs for steps whose longest sequence is up to this many tokens (padded to a power of
    # two from 1024); a longer sequence's steps are captured lazily, and logged to engine_events.
    graph_max_seq: int = 2048
    # Where the engine logs what stalls its loop while serving (lazy graph captures, long garbage collections).
    engine_events: str | None = None
    # Where the engine writes one JSON line per finished request: its own clock readings of every token.
    request_log: str | None = None
    # The engine process's interpreter switch interval in ms (0: Python's default, 5 ms). Without CUDA graphs every
    # kernel is launched from Python, so how long the generation thread waits for the GIL is part of its step time.
    switch_interval_ms: float = 0.0
    # How often the output thread collects finished tokens (0: as each output arrives, waking on every step).
    reader_poll_ms: float = 0.0
    # Where the engine logs, once a second, the CPU seconds each of its threads used (from /proc), to tell a
    # launch-bound generation loop from one that waits.
    thread_cpu_log: str | None = None


def epoch_offset() -> float:
    """Seconds to add to a perf_counter reading to get epoch seconds (read once: both clocks advance together)."""
    return time.time() - time.perf_counter()


def model_runner_of(manager) -> tuple:
    """transformers' model runner behind a continuous-batching manager and its inputs/outputs (graphs, padding), or
    None for either where this transformers has no such attribute."""
    runner = getattr(getattr(manager, "batch_processor", None), "model_runner", None)
    return runner, getattr(runner, "inputs_and_outputs", None)


def serve(settings: EngineSettings, inbox, outbox) -> None:
    try:
        if settings.engine == "fake":
            FakeEngine(settings, inbox, outbox).run()
        else:
            TransformersEngine(settings, inbox, outbox).run()
    except BaseException:  # noqa: BLE001 - whatever broke, the face must hear it rather than wait forever
        outbox.put(("fatal", traceback.format_exc()))


class TransformersEngine:
    def __init__(self, settings: EngineSettings, inbox, outbox) -> None:
        self.settings = settings
        self.inbox = inbox
        self.outbox = outbox

    def run(self) -> None:
        import torch
        import transformers
        from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

        started = time.perf_counter()
        if self.settings.torch_threads > 0:
            torch.set_num_threads(self.settings.torch_threads)
        torch.manual_seed(self.settings.seed)
        shape = dict(LLAMA_3_8B_SHAPE, num_hidden_layers=self.settings.num_layers)
        config = LlamaConfig(**shape)
        if self.settings.attn_implementation:
            config._attn_implementation = self.settings.attn_implementation
        # Random weights straight on the GPU in bf16 (16 GB for the 8B shape): nothing is downloaded.
        torch.set_default_dtype(torch.bfloat16)
        with torch.device("cuda"):
            model = LlamaForCausalLM(config)
        torch.set_default_dtype(torch.float32)
        model.eval()
        built_s = time.perf_counter() - started

        cb_config = self._cb_config(transformers)
        generation_config = GenerationConfig(do_sample=False, eos_token_id=-1, pad_token_id=0, max_new_tokens=64)
        manager = model.init_continuous_batching(
            generation_config=generation_config, continuous_batching_config=cb_config
        )
        warm_started = time.perf_counter()
        manager.warmup()
        warmup_s = time.perf_counter() - warm_started
        graph_warmup = {"mode": self.settings.graph_warmup}
        if self.settings.graph_warmup == "full":
            graph_warmup.update(self._capture_every_shape(manager, model))
        offset = epoch_offset()
        self._trace_serving(manager, offset)
        manager.start()
        resolved = manager.continuous_batching_config
        processor = manager.batch_processor
        cache = processor.cache if processor is not None else None
        block_size = int(getattr(cache, "block_size", self.settings.block_size) or self.settings.block_size)
        num_blocks = int(getattr(cache, "num_blocks", self.settings.num_blocks) or self.settings.num_blocks)
        info = {
            "engine": "transformers-continuous-batching",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "gpu": torch.cuda.get_device_name(0),
            "model_shape": shape,
            "attn_implementation": model.config._attn_implementation,
            "block_size": block_size,
            "num_blocks": num_blocks,
            "max_total_tokens": block_size * num_blocks,
            "max_batch_tokens": int(getattr(resolved, "max_batch_tokens", None) or self.settings.max_batch_tokens),
            "max_requests_per_batch": getattr(resolved, "max_requests_per_batch", None),
            "use_cuda_graph": repr(getattr(resolved, "use_cuda_graph", None)),
            "scheduler_type": getattr(resolved, "scheduler_type", "fifo"),
            "resolved_config": {k: repr(v) for k, v in vars(resolved).items()} if hasattr(resolved, "__dict__") else repr(resolved),
            "build_s": round(built_s, 2),
            "cpu_affinity": len(os.sched_getaffinity(0)),
            "torch_threads": torch.get_num_threads(),
            "warmup_s": round(warmup_s, 2),
            "graph_warmup": graph_warmup,
        }
        if self.settings.switch_interval_ms > 0:
            import sys
            sys.setswitchinterval(self.settings.switch_interval_ms / 1000)
        info["switch_interval_s"] = __import__("sys").getswitchinterval()
        info["reader_poll_ms"] = self.settings.reader_poll_ms
        self.outbox.put(("ready", info))
        stop = threading.Event()
        if self.settings.thread_cpu_log:
            threading.Thread(target=log_thread_cpu, args=(self.settings.thread_cpu_log, stop), daemon=True).start()
        self.prompt_tokens: dict[str, int] = {}
        reader = threading.Thread(target=self._forward_outputs, args=(manager, offset, stop), daemon=True)
        reader.start()
        while True:
            message = self.inbox.get()
            if message[0] == "add":
                _, rid, input_ids, max_new_tokens = message
                self.prompt_tokens[rid] = len(input_ids)
                manager.add_request(
                    input_ids=input_ids, request_id=rid, max_new_tokens=max_new_tokens,
                    streaming=True, record_timestamps=True,
                )
            elif message[0] == "cancel":
                manager.cancel_request(message[1])
            elif message[0] == "stop":
                break
        stop.set()
        manager.stop(block=True, timeout=30)

    def _capture_every_shape(self, manager, model) -> dict:
        """Captures, before serving, the CUDA graph of every padded step shape that serving will ask for.

        With max_blocks_per_request 0 every step (prefill, decode or mixed) takes transformers' varlen path. In 5.17
        its graphs are keyed by three padded sizes (inputs_and_outputs._get_graph_key): the step's query tokens (to
        q_padding_interval_size), the KV tokens it reads from the cache, summed over its requests (to
        kv_padding_interval_size), and its longest sequence (to a power of two, at least 1024). The engine's own
        warmup captures one key; every other key is captured the first time a step has it, which adds the capture
        (100-300 ms) to that step. A full batch whose KV first passes 16,384 tokens meets a new key at each query
        size, so such stalls cluster in the first seconds of a burst (10 steps of 172 took 189-297 ms instead of
        70-120 in the burst of results/2026-11-23-four-lengths/).

        SGLang captures its graphs at start-up, so the engine does so too, for every key with a longest sequence up
        to graph_max_seq tokens: one batch of made-up prefilling requests per key, sized so that the batch pads to
        it (the key read back from the engine after padding is what is stored, so a mismatch is seen, not assumed).
        Keys the warmup could not make are captured lazily while serving, and `_trace_serving` logs each."""
        runner, io = model_runner_of(manager)
        needed = ("maybe_pad_inputs", "_capture_graph", "_get_forward_fn", "logit_processor")
        try:
            from transformers.generation.continuous_batching.requests import RequestStatus
            from transformers.generation.continuous_batching.utils import create_warmup_future_states
        except ImportError:
            runner = None
        if runner is None or io is None or not all(hasattr(runner, name) for name in needed) \
                or not hasattr(io, "_get_graph_key") or not hasattr(io, "graphs"):
            return {"captured": 0, "note": "this transformers has no model runner this warmup knows; graphs are captured lazily"}
        import inspect
        import math

        import torch

        config = manager.continuous_batching_config
        cache = runner.cache
        q_step = int(getattr(config, "q_padding_interval_size", 0) or 64)
        kv_step = int(getattr(config, "kv_padding_interval_size", 0) or 16384)
        max_q = int(cache.max_batch_tokens)
        block = int(cache.block_size)
        num_blocks = int(cache.num_blocks)
        total_kv = num_blocks * block
        max_requests = int(getattr(config, "max_requests_per_batch", 0) or 64)
        seq_buckets = [1024]
        while seq_buckets[-1] * 2 <= self.settings.graph_max_seq:
            seq_buckets.append(seq_buckets[-1] * 2)
        takes_padding_flag = "use_padding" in inspect.signature(io.prepare_batch_tensors).parameters

        def batch_for(q: int, kv: int, seq: int) -> tuple[int, int, int] | None:
            """n requests of q_each query and kv_each cached tokens whose padded step is (q, kv, seq), or None."""
            for n in range(1, max_requests + 1):
                q_each = q // n
                if q_each < 1 or n * q_each <= q - q_step:
                    continue
                kv_each = min(kv // n, seq - q_each)
                if kv_each < 0 or (seq > 1024 and q_each + kv_each <= seq // 2):
                    continue
                if not (kv - kv_step < n * kv_each <= kv or (kv == kv_step and n * kv_each == 0)):
                    continue
                if n * math.ceil((q_each + kv_each) / block) > num_blocks:
                    continue
                return n, q_each, kv_each
            return None

        started = time.perf_counter()
        captured, unreachable, mismatched = 0, 0, []
        try:
            with torch.inference_mode():  # as transformers' own warmup runs
                for seq in seq_buckets:
                    for q in range(q_step, max_q + 1, q_step):
                        for kv in range(kv_step, total_kv + 1, kv_step):
                            shape = batch_for(q, kv, seq)
                            if shape is None:
                                unreachable += 1
                                continue
                            n, q_each, kv_each = shape
                            states = create_warmup_future_states(n, RequestStatus.PREFILLING, q_each, kv_each, cache)
                            try:
                                if len(states) < n:
                                    unreachable += 1
                                    continue
                                padded_q, padded_kv = runner.maybe_pad_inputs(
                                    num_q_tokens=n * q_each, max_kv_read=n * kv_each, use_decode_fast_path=False)
                                args = [states, runner.logit_processor, False, padded_q, padded_kv]
                                io.prepare_batch_tensors(*args, True) if takes_padding_flag else io.prepare_batch_tensors(*args)
                                batch_data = io.get_model_kwargs(use_padding=True)
                                key = tuple(int(k) for k in io._get_graph_key())
                                if key != (q, kv, seq):
                                    mismatched.append([[q, kv, seq], list(key)])
                                if io.graphs.get_graph(key) is not None:
                                    continue
                                forward_fn, use_graph = runner._get_forward_fn(use_block_table=io.use_block_table)
                                if not use_graph:
                                    return {"captured": captured, "note": "CUDA graphs are off for the varlen path"}
                                carry_over_ids, prev_output_ids, output_ids = io.get_cb_kwargs()
                                runner._capture_graph(forward_fn, io.compute_stream, model, batch_data, carry_over_ids,
                                                      prev_output_ids, output_ids)
                                captured += 1
                            finally:
                                for state in states:
                                    cache.free_blocks(state.state.request_id)
        except Exception as error:  # noqa: BLE001 - an engine that serves with lazy captures beats no engine
            return {"captured": captured, "note": f"stopped: {error!r}"}
        return {"captured": captured, "unreachable": unreachable, "mismatched": mismatched[:8],
                "mismatched_count": len(mismatched), "q_step": q_step, "kv_step": kv_step, "seq_buckets": seq_buckets,
                "seconds": round(time.perf_counter() - started, 2)}

    def _trace_serving(self, manager, offset: float) -> None:
        """Logs what stalls the generation loop while serving, one JSON line each, to engine_events: a CUDA graph
        captured lazily (its key, how long) and a garbage collection of 10 ms or more. Both would be invisible in the
        request log, which only shows that a step took long."""
        if not self.settings.engine_events:
            return
        import gc

        events = open(self.settings.engine_events, "a", buffering=1)
        lock = threading.Lock()

        def write(record: dict) -> None:
            with lock:
                events.write(json.dumps(record) + "\n")

        runner, io = model_runner_of(manager)
        if runner is not None and hasattr(runner, "_capture_graph"):
            capture = runner._capture_graph

            def traced_capture(*args, **kwargs):
                began = time.perf_counter()
                try:
                    return capture(*args, **kwargs)
                finally:
                    key = list(io._get_graph_key()) if hasattr(io, "_get_graph_key") else None
                    write({"event": "graph_capture", "time": round(began + offset, 6),
                           "ms": round((time.perf_counter() - began) * 1000, 2), "key": key})

            runner._capture_graph = traced_capture
        collecting: dict = {}

        def on_gc(phase: str, info: dict) -> None:
            if phase == "start":
                collecting["began"] = time.perf_counter()
                return
            began = collecting.pop("began", None)
            if began is not None and time.perf_counter() - began >= 0.010:
                write({"event": "gc", "time": round(began + offset, 6), "generation": info.get("generation"),
                       "ms": round((time.perf_counter() - began) * 1000, 2), "collected": info.get("collected")})

        gc.callbacks.append(on_gc)
        write({"event": "serving", "time": round(time.perf_counter() + offset, 6),
               "graphs": len(getattr(getattr(io, "graphs", None), "_storage", ()) or ())})

    def _cb_config(self, transformers):
        from dataclasses import fields

        wanted = dict(
            block_size=self.settings.block_size,
            num_blocks=self.settings.num_blocks,
            max_batch_tokens=self.settings.max_batch_tokens,
            max_requests_per_batch=self.settings.max_requests_per_batch,
            allow_block_sharing=False,  # no prefix cache: the twin runs with --disable-radix-cache
            scheduler_type="fifo",
        )
        if self.settings.use_cuda_graph is not None:
            wanted["use_cuda_graph"] = self.settings.use_cuda_graph
        config_class = getattr(transformers, "ContinuousBatchingConfig", None)
        if config_class is None:
            from transformers.generation.configuration_utils import ContinuousBatchingConfig as config_class
        known = {field.name for field in fields(config_class)}
        return config_class(**{key: value for key, value in wanted.items() if key in known})

    def _forward_outputs(self, manager, offset: float, stop: threading.Event) -> None:
        """Turns the manager's GenerationOutputs into small events, many per message (one pickle per batch)."""
        sent: dict[str, int] = {}
        # Line-buffered: a run cut short keeps every request that finished.
        log_file = open(self.settings.request_log, "a", buffering=1) if self.settings.request_log else None
        poll_s = self.settings.reader_poll_ms / 1000
        while not stop.is_set():
            if poll_s > 0:
                time.sleep(poll_s)
            first = manager.get_result(timeout=0.05)
            if first is None:
                continue
            batch = [first]
            while True:
                more = manager.get_result(timeout=0)
                if more is None:
                    break
                batch.append(more)
            events = []
            for output in batch:
                rid = output.request_id
                tokens = list(output.generated_tokens)
                stamps = output.timestamps or []
                already = sent.get(rid, 0)
                if output.error is not None:
                    events.append((rid, "error", str(output.error)))
                    sent.pop(rid, None)
                    continue
                if len(tokens) > already:
                    newest = stamps[len(tokens) - 1] + offset if len(stamps) >= len(tokens) else time.time()
                    times = None
                    if already == 0:
                        times = {"engine_arrival": output.created_time + offset,
                                 "left_queue": output.lifespan[0] + offset if output.lifespan[0] > 0 else None,
                                 "first_token": stamps[0] + offset if stamps else newest}
                    events.append((rid, "tokens", (tokens[already:], newest, times)))
                    sent[rid] = len(tokens)
                if output.is_finished():
                    sent.pop(rid, None)
                    if log_file is not None:
                        log_file.write(json.dumps({
                            "rid": rid, "prompt_tokens": self.prompt_tokens.pop(rid, None),
                            "arrival": round(output.created_time + offset, 6),
                            "left_queue": round(output.lifespan[0] + offset, 6) if output.lifespan[0] > 0 else None,
                            "finished": round(output.lifespan[1] + offset, 6) if output.lifespan[1] > 0 else None,
                            "tokens": [round(stamp + offset, 6) for stamp in stamps],
                        }) + "\n")
                    events.append((rid, "done", {
                        "engine_arrival": output.created_time + offset,
                        "left_queue": output.lifespan[0] + offset if output.lifespan[0] > 0 else None,
                        "first_token": stamps[0] + offset if stamps else None,
                        "finished": output.lifespan[1] + offset if output.lifespan[1] > 0 else time.time(),
                        "completion_tokens": len(tokens),
                    }))
            if events:
                self.outbox.put(("events", events))


def log_thread_cpu(path: str, stop: threading.Event) -> None:
    """Once a second: wall time and, per thread of this process, its name and CPU seconds (user + system, from
    /proc/self/task/TID/stat), one JSON line; differences between lines give each thread's CPU share. Between lines,
    every 10 ms, where each other Python thread stands (its innermost frames), counted: which line a slow stretch of
    steps spends its time in."""
    import collections
    import sys

    ticks = os.sysconf("SC_CLK_TCK")
    names = {}
    me = threading.get_ident()

    def where(frame) -> str:
        """The innermost frame and its three callers, file:line:function each."""
        chain = []
        while frame is not None and len(chain) < 4:
            chain.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}:{frame.f_code.co_name}")
            frame = frame.f_back
        return " < ".join(chain)

    with open(path, "a", buffering=1) as out:
        while not stop.is_set():
            for thread in threading.enumerate():
                if thread.native_id is not None:
                    names[thread.native_id] = thread.name
            idents = {thread.ident: thread.name for thread in threading.enumerate()}
            samples: dict = collections.defaultdict(collections.Counter)
            until = time.perf_counter() + 1.0
            while time.perf_counter() < until:
                for ident, frame in sys._current_frames().items():
                    if ident != me:
                        samples[idents.get(ident, str(ident))][where(frame)] += 1
                time.sleep(0.01)
            threads = {}
            for tid in os.listdir("/proc/self/task"):
                try:
                    with open(f"/proc/self/task/{tid}/stat") as stat:
                        fields = stat.read().rsplit(")", 1)[1].split()
                    threads[names.get(int(tid), tid)] = (int(fields[11]) + int(fields[12])) / ticks
                except (OSError, IndexError, ValueError):
                    continue
            top = {name: counter.most_common(4) for name, counter in samples.items()}
            out.write(json.dumps({"time": round(time.time(), 3), "cpu_s": threads, "where": top}) + "\n")


class FakeEngine:
    """A stand-in with the same queue protocol: FIFO admission, one prefill step per new request (its own length
    times a per-token cost), then one token per step for every running request. Only for the face's smoke test."""

    def __init__(self, settings: EngineSettings, inbox, outbox) -> None:
        self.settings = settings
        self.inbox = inbox
        self.outbox = outbox

    def run(self) -> None:
        s = self.settings
        self.outbox.put(("ready", {
            "engine": "fake", "block_size": s.block_size, "num_blocks": s.num_blocks,
            "max_total_tokens": s.block_size * s.num_blocks, "max_batch_tokens": s.max_batch_tokens,
            "max_requests_per_batch": s.max_requests_per_batch, "model_shape": {"num_hidden_layers": 0},
        }))
        waiting: list[dict] = []
        running: list[dict] = []
        while True:
            try:
                message = self.inbox.get(timeout=0.001 if (waiting or running) else 0.05)
            except queue.Empty:
                message = None
            if message is not None:
                if message[0] == "stop":
                    return
                if message[0] == "add":
                    _, rid, ids, max_new = message
                    waiting.append({"rid": rid, "ids": ids, "max": max_new, "out": [], "arrival": time.time()})
                elif message[0] == "cancel":
                    waiting = [r for r in waiting if r["rid"] != message[1]]
                    running = [r for r in running if r["rid"] != message[1]]
            if not waiting and not running:
                continue
            events = []
            if waiting and len(running) < s.max_requests_per_batch:
                request = waiting.pop(0)
                request["left"] = time.time()
                time.sleep(s.fake_step_ms / 1000 + len(request["ids"]) * s.fake_prefill_ms_per_token / 1000)
                request["first"] = time.time()
                running.append(request)
                stepped = [request]
            else:
                time.sleep(s.fake_step_ms / 1000)
                stepped = list(running)
            now = time.time()
            for request in stepped:
                token = (len(request["out"]) * 7919 + len(request["ids"])) % 32000
                request["out"].append(token)
                times = None
                if len(request["out"]) == 1:
                    times = {"engine_arrival": request["arrival"], "left_queue": request["left"], "first_token": request["first"]}
                events.append((request["rid"], "tokens", ([token], now, times)))
                if len(request["out"]) >= request["max"]:
                    running.remove(request)
                    events.append((request["rid"], "done", {
                        "engine_arrival": request["arrival"], "left_queue": request["left"],
                        "first_token": request["first"], "finished": now, "completion_tokens": len(request["out"]),
                    }))
            self.outbox.put(("events", events))
