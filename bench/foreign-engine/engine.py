"""A small continuous-batching engine with an SGLang-shaped HTTP face, in Python 3.11's standard library only.

servelab never saw this engine while it was written: it exists so that calibration and the virtual-time twin can be
tried on an engine whose scheduler and step-time law are not servelab's own (README.md says what both are). The GPU is
replaced by sleeping for the step time the law gives; everything else (admission, KV accounting, chunking,
preemption, the timestamps in meta_info) is a real scheduler loop running in real time.

    python3 engine.py --port 0        # prints "listening on http://127.0.0.1:PORT" once it serves
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import random
import sys
import threading
import time
import uuid

MODEL_NAME = "foreign-engine"


class Law:
    """Step time in ms: a + b * sqrt(tokens) * ln(1 + sequences) + c * kv^0.8, times a lognormal jitter."""

    def __init__(self, a_ms: float, b: float, c: float, sigma: float, seed: int) -> None:
        self.a_ms, self.b, self.c, self.sigma = a_ms, b, c, sigma
        self.random = random.Random(seed)

    def step_ms(self, tokens: int, sequences: int, kv_tokens: int) -> float:
        base = self.a_ms + self.b * math.sqrt(tokens) * math.log(1 + sequences) + self.c * kv_tokens ** 0.8
        return base * (self.random.lognormvariate(0.0, self.sigma) if self.sigma > 0 else 1.0)


class Request:
    __slots__ = ("rid", "prompt", "max_new", "received", "queued", "forward_entry", "prefill_finished", "finished",
                 "computed", "output_ids", "preemptions", "events", "admitted_serial", "aborted")

    def __init__(self, rid: str, prompt: list[int], max_new: int, received: float) -> None:
        self.rid = rid
        self.prompt = prompt
        self.max_new = max_new
        self.received = received
        self.queued = received
        self.forward_entry: float | None = None
        self.prefill_finished: float | None = None
        self.finished: float | None = None
        # Tokens whose KV is held (prompt chunks computed, then every generated token): what a step reads.
        self.computed = 0
        self.output_ids: list[int] = []
        self.preemptions = 0
        self.events: asyncio.Queue = asyncio.Queue()
        self.admitted_serial = 0
        self.aborted = False

    @property
    def context(self) -> int:
        """Tokens that must be in KV before the next token can be generated: the prompt, then what was generated (a
        preempted request recomputes all of them)."""
        return len(self.prompt) + len(self.output_ids)

    @property
    def prefilling(self) -> bool:
        return self.computed < self.context


class Engine:
    """The scheduler: decode-first steps, prompt chunks in 64-token blocks filling the rest of the step's token budget,
    KV counted per token, admission up to max_running requests, preemption (recompute) of the newest when KV runs out."""

    BLOCK = 64

    def __init__(self, args: argparse.Namespace) -> None:
        self.max_running = args.max_running_requests
        self.max_total_tokens = args.max_total_tokens
        self.step_tokens = args.chunked_prefill_size
        self.context_length = args.context_length
        self.law = Law(args.law_a_ms, args.law_b, args.law_c, args.jitter_sigma, args.seed)
        self.waiting: collections.deque[Request] = collections.deque()
        self.running: list[Request] = []
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.serial = 0
        self.steps = 0
        # The law's step time summed, and how much later than it the steps ended (GIL hand-over, a loaded machine).
        self.law_seconds = 0.0
        self.late_seconds = 0.0
        # The loop's own time between one step's end and the next one's start, over steps that followed another without
        # waiting for work: what a stream's token interval holds beyond the step itself.
        self.gap_seconds = 0.0
        self.gap_steps = 0
        self.last_end: float | None = None
        self.epoch_offset = time.time() - time.monotonic()
        self.token_random = random.Random(args.seed + 1)

    def now(self) -> float:
        """Epoch seconds from the monotonic clock (one offset taken at start), so stamps never go backwards."""
        return time.monotonic() + self.epoch_offset

    def kv_used(self) -> int:
        return sum(request.computed for request in self.running)

    def submit(self, request: Request) -> None:
        with self.lock:
            request.received = request.queued = self.now()
            self.waiting.append(request)
            self.wake.notify()

    def abort(self, request: Request) -> None:
        with self.lock:
            request.aborted = True
            if request in self.running:
                self.running.remove(request)
            elif request in self.waiting:
                self.waiting.remove(request)

    def plan(self) -> list[tuple[Request, int]]:
        """The next step: (request, tokens computed for it) pairs."""
        budget = self.step_tokens
        work: list[tuple[Request, int]] = []
        decoders = [request for request in self.running if not request.prefilling]
        # Every decoding request needs one more KV token; when the pool cannot give it, the newest admitted request
        # loses its KV and goes back to the head of the queue (it recomputes prompt and output when readmitted).
        while decoders and self.kv_used() + len(decoders) > self.max_total_tokens:
            victim = max(self.running, key=lambda request: request.admitted_serial)
            self.running.remove(victim)
            if victim in decoders:
                decoders.remove(victim)
            victim.computed = 0
            victim.preemptions += 1
            self.waiting.appendleft(victim)
        for request in decoders:
            work.append((request, 1))
        budget -= len(decoders)
        # Unfinished prompts continue, in admission order; then new requests are admitted while room remains.
        for request in [request for request in self.running if request.prefilling]:
            chunk = self.chunk_of(request, budget)
            if chunk > 0:
                work.append((request, chunk))
                budget -= chunk
        while self.waiting and len(self.running) < self.max_running and budget > 0:
            head = self.waiting[0]
            # A request is admitted only when its whole context and 32 tokens of output fit beside what is held.
            if self.kv_used() + sum(r.context - r.computed for r in self.running) + head.context + 32 > self.max_total_tokens:
                break
            chunk = self.chunk_of(head, budget)
            if chunk == 0:
                break
            self.waiting.popleft()
            self.serial += 1
            head.admitted_serial = self.serial
            self.running.append(head)
            work.append((head, chunk))
            budget -= chunk
        return work

    def chunk_of(self, request: Request, budget: int) -> int:
        """The prompt tokens this step computes: all that is left if it fits, else whole 64-token blocks of the budget."""
        left = request.context - request.computed
        if left <= budget:
            return left
        return (budget // self.BLOCK) * self.BLOCK

    def run(self, loop: asyncio.AbstractEventLoop) -> None:
        """The scheduler loop, on its own thread (as SGLang's scheduler runs apart from its HTTP server), so that the
        face's JSON work delays a step's end only by the GIL hand-over, not by a whole turn of the event loop."""
        while True:
            with self.lock:
                waited = False
                while not (work := self.plan()):
                    # Idle, or nothing fits (a prompt larger than the pool is refused at the door, so a full pool): wait.
                    waited = True
                    self.wake.wait()
                started = self.now()
                if not waited and self.last_end is not None:
                    self.gap_seconds += started - self.last_end
                    self.gap_steps += 1
                tokens = sum(count for _, count in work)
                kv_read = sum(request.computed + count for request, count in work)
                for request, _ in work:
                    if request.forward_entry is None:
                        request.forward_entry = started
            duration_s = self.law.step_ms(tokens, len(work), kv_read) / 1000.0
            time.sleep(max(0.0, started + duration_s - self.now()))
            events: list[tuple[Request, bool]] = []
            with self.lock:
                ended = self.now()
                self.steps += 1
                self.law_seconds += duration_s
                self.late_seconds += max(0.0, ended - started - duration_s)
                for request, count in work:
                    if request.aborted:
                        continue
                    request.computed += count
                    if request.prefilling:
                        continue
                    request.output_ids.append(self.token_random.randrange(1000, 30000))
                    if request.prefill_finished is None:
                        request.prefill_finished = ended
                    done = len(request.output_ids) >= request.max_new
                    if done:
                        request.finished = ended
                        self.running.remove(request)
                    events.append((request, done))
            if events:
                loop.call_soon_threadsafe(deliver, events)
            self.last_end = ended


def deliver(events: list) -> None:
    for request, done in events:
        request.events.put_nowait(done)


def token_ids_of(prompt) -> list[int] | None:
    """Token ids as given; text becomes one id per whitespace-separated word (no tokenizer here)."""
    if isinstance(prompt, list) and prompt and all(isinstance(x, int) for x in prompt):
        return prompt
    if isinstance(prompt, list) and len(prompt) == 1:
        return token_ids_of(prompt[0])
    if isinstance(prompt, str):
        return [100 + sum(map(ord, word)) % 30000 for word in prompt.split()] or [100]
    return None


def text_of(ids: list[int]) -> str:
    return "".join(f" w{token}" for token in ids)


class Face:
    """HTTP/1.1 over asyncio streams: keep-alive, Content-Length bodies, chunked event streams."""

    def __init__(self, engine: Engine, port: int) -> None:
        self.engine = engine
        self.port = port
        self.requests: dict[str, Request] = {}

    def meta(self, request: Request, final: bool, sent: float | None = None) -> dict:
        meta = {
            "id": request.rid,
            "finish_reason": {"type": "length", "length": len(request.output_ids)} if final else None,
            "prompt_tokens": len(request.prompt),
            "weight_version": "default",
            "completion_tokens": len(request.output_ids),
            "cached_tokens": 0,
            "num_retractions": request.preemptions,
        }
        if request.forward_entry is not None:
            meta["forward_entry_time"] = request.forward_entry
            meta["queue_time"] = request.forward_entry - request.queued
        if request.prefill_finished is not None:
            meta["prefill_finished_time"] = request.prefill_finished
        if sent is not None:
            meta["response_sent_to_client_ts"] = sent
        if final and request.finished is not None:
            meta["request_received_ts"] = request.received
            meta["api_server_dispatch_finish_ts"] = request.received
            meta["request_finished_ts"] = request.finished
            meta["e2e_latency"] = request.finished - request.received
        return meta

    def refuse(self, prompt: list[int], max_new: int) -> str | None:
        if len(prompt) + max_new > self.engine.context_length:
            return (f"Requested token count exceeds the model's maximum context length of {self.engine.context_length}"
                    f" tokens. You requested a total of {len(prompt) + max_new} tokens")
        if len(prompt) + 32 > self.engine.max_total_tokens:
            return f"The input ({len(prompt)} tokens) is longer than the KV pool ({self.engine.max_total_tokens} tokens)."
        return None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                path = target.split("?", 1)[0]
                keep = await self.route(method, path, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - a socket the peer already closed
                pass

    async def respond(self, writer, status: int, payload, content_type: str = "application/json") -> bool:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}.get(status, "OK")
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
        await writer.drain()
        return True

    async def start_stream(self, writer) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")

    async def send_event(self, writer, payload) -> None:
        data = b"data: " + (payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()) + b"\n\n"
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await writer.drain()

    async def end_stream(self, writer) -> None:
        await self.send_event(writer, b"[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def route(self, method: str, path: str, body: bytes, writer) -> bool:
        if path == "/generate" and method == "POST":
            return await self.generate(body, writer)
        if path == "/v1/completions" and method == "POST":
            return await self.completions(body, writer)
        if path in ("/health", "/health_generate") and method == "GET":
            if path == "/health_generate":
                request = Request(uuid.uuid4().hex, [1], 1, self.engine.now())
                self.engine.submit(request)
                while not await request.events.get():
                    pass
            return await self.respond(writer, 200, b"", "text/plain")
        if path in ("/server_info", "/get_server_info") and method == "GET":
            return await self.respond(writer, 200, self.server_info())
        if path in ("/model_info", "/get_model_info") and method == "GET":
            return await self.respond(writer, 200, {"model_path": MODEL_NAME, "tokenizer_path": None, "is_generation": True})
        if path == "/v1/models" and method == "GET":
            return await self.respond(writer, 200, {"object": "list", "data": [
                {"id": MODEL_NAME, "object": "model", "owned_by": "foreign-engine", "max_model_len": self.engine.context_length}]})
        if path == "/flush_cache" and method in ("GET", "POST"):
            return await self.respond(writer, 200, b"Cache flushed (this engine keeps no prefix cache).\n", "text/plain")
        if path == "/metrics" and method == "GET":
            return await self.respond(writer, 200, self.metrics().encode(), "text/plain; version=0.0.4")
        return await self.respond(writer, 404, {"error": {"message": f"no route {method} {path}"}})

    def server_info(self) -> dict:
        engine = self.engine
        return {
            "model_path": MODEL_NAME, "tokenizer_path": None, "served_model_name": MODEL_NAME, "port": self.port,
            "max_running_requests": engine.max_running, "max_total_tokens": engine.max_total_tokens,
            "max_total_num_tokens": engine.max_total_tokens, "chunked_prefill_size": engine.step_tokens,
            "context_length": engine.context_length, "schedule_policy": "fcfs", "disable_radix_cache": True,
            "enable_metrics": True, "page_size": 1, "tp_size": 1, "dp_size": 1, "version": "foreign-engine-1",
            "internal_states": [{"max_total_num_tokens": engine.max_total_tokens, "num_running_reqs": len(engine.running),
                                 "num_waiting_reqs": len(engine.waiting)}],
        }

    def metrics(self) -> str:
        engine = self.engine
        with engine.lock:
            used = engine.kv_used()
            gauges = [("num_running_reqs", len(engine.running)), ("num_queue_reqs", len(engine.waiting)),
                      ("num_used_tokens", used), ("token_usage", used / engine.max_total_tokens)]
            counters = [("foreign_engine_steps_total", engine.steps),
                        ("foreign_engine_law_seconds_total", round(engine.law_seconds, 6)),
                        ("foreign_engine_late_seconds_total", round(engine.late_seconds, 6)),
                        ("foreign_engine_gap_seconds_total", round(engine.gap_seconds, 6)),
                        ("foreign_engine_gap_steps_total", engine.gap_steps)]
        labels = f'{{model_name="{MODEL_NAME}"}}'
        return "".join(f"# TYPE sglang:{name} gauge\nsglang:{name}{labels} {value}\n" for name, value in gauges) + "".join(
            f"# TYPE {name} counter\n{name}{labels} {value}\n" for name, value in counters)

    def parse(self, body: bytes):
        try:
            parsed = json.loads(body or b"{}")
        except ValueError as error:
            return None, f"body is not JSON: {error}"
        return (parsed, None) if isinstance(parsed, dict) else (None, "body is not a JSON object")

    async def serve_request(self, writer, prompt: list[int], max_new: int, stream: bool, emit, finish) -> bool:
        request = Request(uuid.uuid4().hex, prompt, max_new, self.engine.now())
        self.engine.submit(request)
        try:
            if stream:
                await self.start_stream(writer)
            first_sent: float | None = None
            while True:
                done = await request.events.get()
                if stream:
                    first_sent = first_sent or self.engine.now()
                    await emit(request, done, first_sent)
                if done:
                    break
            if stream:
                await self.end_stream(writer)
                return True
            return await self.respond(writer, 200, finish(request))
        except (ConnectionError, asyncio.CancelledError):
            self.engine.abort(request)
            raise

    async def generate(self, body: bytes, writer) -> bool:
        parsed, problem = self.parse(body)
        if parsed is None:
            return await self.respond(writer, 400, {"error": {"message": problem}})
        params = parsed.get("sampling_params") or {}
        max_new = int(params.get("max_new_tokens", 128))
        prompt = parsed.get("input_ids")
        prompt = token_ids_of(prompt if prompt is not None else parsed.get("text", ""))
        problem = "input_ids or text is required" if prompt is None else self.refuse(prompt, max_new)
        if problem is not None:
            return await self.respond(writer, 400, {"error": {"message": problem}})

        async def emit(request: Request, done: bool, first_sent: float) -> None:
            await self.send_event(writer, {"text": text_of(request.output_ids), "output_ids": request.output_ids,
                                           "meta_info": self.meta(request, done, first_sent)})

        def finish(request: Request) -> dict:
            return {"text": text_of(request.output_ids), "output_ids": request.output_ids,
                    "meta_info": self.meta(request, True, self.engine.now())}

        return await self.serve_request(writer, prompt, max_new, bool(parsed.get("stream")), emit, finish)

    async def completions(self, body: bytes, writer) -> bool:
        parsed, problem = self.parse(body)
        prompt = None if parsed is None else token_ids_of(parsed.get("prompt", ""))
        max_new = 16 if parsed is None else int(parsed.get("max_tokens", 16))
        problem = problem or ("prompt is required" if prompt is None else self.refuse(prompt, max_new))
        if problem is not None:
            return await self.respond(writer, 400, {"object": "error", "message": problem, "type": "BadRequestError",
                                                    "param": None, "code": 400})
        model = parsed.get("model") or MODEL_NAME
        created = int(time.time())
        include_usage = bool((parsed.get("stream_options") or {}).get("include_usage"))

        def usage(request: Request) -> dict:
            return {"prompt_tokens": len(request.prompt), "completion_tokens": len(request.output_ids),
                    "total_tokens": len(request.prompt) + len(request.output_ids)}

        async def emit(request: Request, done: bool, _first_sent: float) -> None:
            await self.send_event(writer, {"id": request.rid, "object": "text_completion", "created": created,
                                           "model": model, "choices": [{"index": 0, "text": text_of(request.output_ids[-1:]),
                                                                        "logprobs": None, "finish_reason": "length" if done else None}],
                                           "usage": None})
            if done and include_usage:
                await self.send_event(writer, {"id": request.rid, "object": "text_completion", "created": created,
                                               "model": model, "choices": [], "usage": usage(request)})

        def finish(request: Request) -> dict:
            return {"id": request.rid, "object": "text_completion", "created": created, "model": model,
                    "choices": [{"index": 0, "text": text_of(request.output_ids), "logprobs": None, "finish_reason": "length"}],
                    "usage": usage(request)}

        return await self.serve_request(writer, prompt, max_new, bool(parsed.get("stream")), emit, finish)


async def main_async(args: argparse.Namespace) -> None:
    engine = Engine(args)
    face = Face(engine, args.port)
    server = await asyncio.start_server(face.handle, args.host, args.port, limit=64 * 1024 * 1024, backlog=1024)
    face.port = server.sockets[0].getsockname()[1]
    # The scheduler thread must get the GIL back soon after its sleep ends: the default switch interval (5 ms) would
    # add up to that to every step while the face is busy.
    sys.setswitchinterval(0.0002)
    threading.Thread(target=engine.run, args=(asyncio.get_running_loop(),), daemon=True).start()
    print(f"listening on http://{args.host}:{face.port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000, help="0 picks a free port (printed on the first line)")
    parser.add_argument("--max-running-requests", type=int, default=32)
    parser.add_argument("--max-total-tokens", type=int, default=24576, help="the KV pool, in tokens")
    parser.add_argument("--chunked-prefill-size", type=int, default=512, help="tokens one step computes at most")
    parser.add_argument("--context-length", type=int, default=8192)
    parser.add_argument("--law-a-ms", type=float, default=4.0)
    parser.add_argument("--law-b", type=float, default=0.6)
    parser.add_argument("--law-c", type=float, default=0.004)
    parser.add_argument("--jitter-sigma", type=float, default=0.05, help="sigma of the lognormal step-time jitter")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    try:
        asyncio.run(main_async(args))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
