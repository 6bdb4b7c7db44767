"""An SGLang-shaped HTTP face over the engine process (engine_process.py), written for this harness with aiohttp.

It speaks what servelab's node tests use: SGLang's native POST /generate (streaming or not; meta_info carries the
timing keys of SGLang's --enable-metrics, taken from the engine's own request state), POST /v1/completions (OpenAI
completions, streaming or not, prompts as text or token ids), GET /server_info (and /get_server_info) whose limits are
the engine's configuration, GET /health, /health_generate, /v1/models, /get_model_info and POST /flush_cache.

The engine runs in a separate process (multiprocessing, spawn), as SGLang's scheduler does: this process parses and
writes JSON; the engine's generation loop never waits on this process's GIL.

    python3 face.py --port 30000 [--engine fake] [--num-blocks 256 --block-size 256 --max-batch-tokens 1024 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import threading
import time
import uuid

from aiohttp import web

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine_process import EngineSettings, serve  # noqa: E402

MODEL_NAME = "random-llama-3-8b-shape"


class Request:
    __slots__ = ("rid", "prompt_tokens", "max_new_tokens", "received", "dispatched", "events", "output_ids", "done", "times")

    def __init__(self, rid: str, prompt_tokens: int, max_new_tokens: int, received: float) -> None:
        self.rid = rid
        self.prompt_tokens = prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.received = received
        self.dispatched = received
        self.events: asyncio.Queue = asyncio.Queue()
        self.output_ids: list[int] = []
        self.done: dict | None = None
        self.times: dict | None = None


class Face:
    def __init__(self, settings: EngineSettings, port: int) -> None:
        self.settings = settings
        self.port = port
        context = multiprocessing.get_context("spawn")
        self.inbox = context.Queue()
        self.outbox = context.Queue()
        self.process = context.Process(target=serve, args=(settings, self.inbox, self.outbox), daemon=True)
        self.info: dict = {}
        self.requests: dict[str, Request] = {}
        self.loop: asyncio.AbstractEventLoop | None = None

    # --- engine side -------------------------------------------------------------------------------------------
    def start_engine(self) -> None:
        self.process.start()
        message = self.outbox.get()
        if message[0] != "ready":
            raise SystemExit(f"engine failed to start:\n{message[1]}")
        self.info = message[1]
        print(f"engine ready: {json.dumps(self.info)}", flush=True)

    def _read_engine(self) -> None:
        """Blocking reads on a thread; each batch is handed to the event loop in one call."""
        while True:
            message = self.outbox.get()
            if message[0] == "fatal":
                print(f"engine died:\n{message[1]}", file=sys.stderr, flush=True)
                assert self.loop is not None
                self.loop.call_soon_threadsafe(self._fail_all, message[1])
                return
            if message[0] == "events":
                assert self.loop is not None
                self.loop.call_soon_threadsafe(self._dispatch, message[1])

    def _dispatch(self, events) -> None:
        for rid, kind, payload in events:
            request = self.requests.get(rid)
            if request is not None:
                request.events.put_nowait((kind, payload))

    def _fail_all(self, text: str) -> None:
        for request in self.requests.values():
            request.events.put_nowait(("error", "engine died: " + text.splitlines()[-1]))

    def submit(self, input_ids: list[int], max_new_tokens: int) -> Request:
        received = time.time()
        rid = uuid.uuid4().hex
        request = Request(rid, len(input_ids), max_new_tokens, received)
        self.requests[rid] = request
        self.inbox.put(("add", rid, input_ids, max_new_tokens))
        request.dispatched = time.time()
        return request

    def forget(self, request: Request) -> None:
        if self.requests.pop(request.rid, None) is not None and request.done is None:
            self.inbox.put(("cancel", request.rid))

    # --- helpers ------------------------------------------------------------------------------------------------
    def token_ids_of(self, prompt) -> list[int]:
        """Token ids as given; text (no tokenizer here) becomes one id per whitespace-separated word."""
        if isinstance(prompt, list) and all(isinstance(x, int) for x in prompt):
            return prompt
        if isinstance(prompt, list) and len(prompt) == 1:
            return self.token_ids_of(prompt[0])
        if isinstance(prompt, str):
            return [100 + (hash(word) % 100000) for word in prompt.split()] or [100]
        raise web.HTTPBadRequest(text=json.dumps({"error": {"message": "prompt must be text or a list of token ids"}}),
                                 content_type="application/json")

    def check_length(self, input_ids: list[int], max_new_tokens: int) -> str | None:
        context = self.context_length()
        if len(input_ids) + max_new_tokens > context:
            return (f"Requested token count exceeds the model's maximum context length of {context} tokens. "
                    f"You requested a total of {len(input_ids) + max_new_tokens} tokens")
        return None

    def context_length(self) -> int:
        return min(int(self.info.get("model_shape", {}).get("max_position_embeddings", 8192) or 8192),
                   int(self.info["max_total_tokens"]))

    @staticmethod
    def text_of(ids: list[int]) -> str:
        return "".join(f" t{token}" for token in ids)

    def meta(self, request: Request, final: bool) -> dict:
        meta: dict = {
            "id": request.rid,
            "finish_reason": {"type": "length", "length": len(request.output_ids)} if final else None,
            "prompt_tokens": request.prompt_tokens,
            "weight_version": "default",
            "num_retractions": 0,
        }
        done = request.done if request.done is not None else request.times
        if done is not None:
            if done.get("left_queue") is not None:
                meta["forward_entry_time"] = done["left_queue"]
                meta["queue_time"] = done["left_queue"] - done["engine_arrival"]
            if done.get("first_token") is not None:
                meta["prefill_finished_time"] = done["first_token"]
        meta["completion_tokens"] = len(request.output_ids)
        meta["cached_tokens"] = 0
        if final and done is not None:
            meta["e2e_latency"] = done["finished"] - request.received
            meta["request_received_ts"] = request.received
            meta["api_server_dispatch_finish_ts"] = request.dispatched
            meta["request_finished_ts"] = done["finished"]
            if done.get("left_queue") is not None:
                meta["inference_time"] = done["finished"] - done["left_queue"]
            meta["response_sent_to_client_ts"] = time.time()
        return meta

    async def events_of(self, request: Request):
        """Yields lists of new token ids until the engine says the request is done (or failed)."""
        while True:
            kind, payload = await request.events.get()
            if kind == "tokens":
                ids, _newest, times = payload
                if times is not None and request.done is None:
                    request.times = times
                request.output_ids.extend(ids)
                yield ids
            elif kind == "done":
                request.done = payload
                return
            else:
                raise RuntimeError(str(payload))

    # --- handlers -----------------------------------------------------------------------------------------------
    async def generate(self, http: web.Request) -> web.StreamResponse:
        body = await http.json()
        params = body.get("sampling_params") or {}
        max_new = int(params.get("max_new_tokens", 128))
        input_ids = body.get("input_ids")
        if input_ids is None:
            input_ids = self.token_ids_of(body.get("text", ""))
        problem = self.check_length(input_ids, max_new)
        if problem is not None:
            return web.json_response({"error": {"message": problem}}, status=400)
        request = self.submit(input_ids, max_new)
        try:
            if not body.get("stream", False):
                async for _ids in self.events_of(request):
                    pass
                return web.json_response({"text": self.text_of(request.output_ids), "output_ids": request.output_ids,
                                          "meta_info": self.meta(request, True)})
            response = await self.start_stream(http)
            async for _ids in self.events_of(request):
                if len(request.output_ids) < max_new:
                    await self.send(response, {"text": self.text_of(request.output_ids),
                                               "output_ids": request.output_ids, "meta_info": self.meta(request, False)})
            await self.send(response, {"text": self.text_of(request.output_ids), "output_ids": request.output_ids,
                                       "meta_info": self.meta(request, True)})
            await response.write(b"data: [DONE]\n\n")
            return response
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except RuntimeError as error:
            return web.json_response({"error": {"message": str(error)}}, status=500)
        finally:
            self.forget(request)

    async def completions(self, http: web.Request) -> web.StreamResponse:
        body = await http.json()
        max_new = int(body.get("max_tokens", 16))
        input_ids = self.token_ids_of(body.get("prompt", ""))
        problem = self.check_length(input_ids, max_new)
        if problem is not None:
            return web.json_response({"object": "error", "message": problem, "type": "BadRequestError", "code": 400},
                                     status=400)
        request = self.submit(input_ids, max_new)
        created = int(time.time())
        model = body.get("model") or MODEL_NAME

        def usage() -> dict:
            return {"prompt_tokens": request.prompt_tokens, "completion_tokens": len(request.output_ids),
                    "total_tokens": request.prompt_tokens + len(request.output_ids)}

        def chunk(text: str, finish: str | None) -> dict:
            return {"id": request.rid, "object": "text_completion", "created": created, "model": model,
                    "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}], "usage": None}

        try:
            if not body.get("stream", False):
                async for _ids in self.events_of(request):
                    pass
                return web.json_response({"id": request.rid, "object": "text_completion", "created": created,
                                          "model": model, "choices": [{"index": 0, "text": self.text_of(request.output_ids),
                                                                       "logprobs": None, "finish_reason": "length"}],
                                          "usage": usage()})
            response = await self.start_stream(http)
            async for ids in self.events_of(request):
                last = len(request.output_ids) >= max_new
                await self.send(response, chunk(self.text_of(ids), "length" if last else None))
            if (body.get("stream_options") or {}).get("include_usage"):
                await self.send(response, {"id": request.rid, "object": "text_completion", "created": created,
                                           "model": model, "choices": [], "usage": usage()})
            await response.write(b"data: [DONE]\n\n")
            return response
        except RuntimeError as error:
            return web.json_response({"object": "error", "message": str(error), "code": 500}, status=500)
        finally:
            self.forget(request)

    @staticmethod
    async def start_stream(http: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(http)
        return response

    @staticmethod
    async def send(response: web.StreamResponse, payload: dict) -> None:
        await response.write(b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n")

    async def server_info(self, _http: web.Request) -> web.Response:
        info = self.info
        max_total = int(info["max_total_tokens"])
        running = sum(1 for r in self.requests.values() if r.done is None)
        return web.json_response({
            "model_path": MODEL_NAME,
            "tokenizer_path": None,
            "served_model_name": MODEL_NAME,
            "port": self.port,
            # The engine's own limits: requests per batch, KV capacity (blocks x block size), tokens per step.
            "max_running_requests": info.get("max_requests_per_batch") or self.settings.max_requests_per_batch,
            "max_total_tokens": max_total,
            "max_total_num_tokens": max_total,
            "chunked_prefill_size": int(info["max_batch_tokens"]),
            "context_length": self.context_length(),
            "schedule_policy": "fcfs",
            "disable_radix_cache": True,
            "enable_metrics": True,
            # SGLang's page size is the unit it cuts prompt chunks to, as well as the KV's allocation unit
            # (schedule_policy.py: a chunk is truncated to whole pages). transformers' FIFO scheduler splits a prompt at
            # whatever token budget is left (scheduler.py, _prepare_request_for_processing); its block size is only
            # how the KV is allocated, and is reported under "engine". Advertising the block (256) as the page had
            # the twin cut a second prompt's chunk to 256 tokens where the engine took all 300-400 left of the budget:
            # with prompts of 480-640 tokens, TTFT p90 came out 24-42% high (results/2026-11-26-graphs-on-build-check).
            "page_size": 1,
            "tp_size": 1,
            "dp_size": 1,
            "version": "transformers-cb-face",
            "engine": info,
            "internal_states": [{"max_total_num_tokens": max_total, "num_running_reqs": running,
                                 "num_waiting_reqs": 0, "last_gen_throughput": 0}],
        })

    async def health(self, _http: web.Request) -> web.Response:
        return web.Response(status=200 if self.process.is_alive() else 503)

    async def health_generate(self, _http: web.Request) -> web.Response:
        request = self.submit([1], 1)
        try:
            async for _ids in self.events_of(request):
                pass
        finally:
            self.forget(request)
        return web.Response(status=200)

    async def models(self, _http: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "servelab",
                                                              "max_model_len": self.context_length()}]})

    async def model_info(self, _http: web.Request) -> web.Response:
        return web.json_response({"model_path": MODEL_NAME, "tokenizer_path": None, "is_generation": True})

    async def flush_cache(self, _http: web.Request) -> web.Response:
        return web.Response(text="Cache flushed (no prefix cache in this engine).\n")

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/generate", self.generate)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_get("/server_info", self.server_info)
        app.router.add_get("/get_server_info", self.server_info)
        app.router.add_get("/health", self.health)
        app.router.add_get("/health_generate", self.health_generate)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/get_model_info", self.model_info)
        app.router.add_post("/flush_cache", self.flush_cache)
        app.router.add_get("/flush_cache", self.flush_cache)

        async def on_startup(_app) -> None:
            self.loop = asyncio.get_running_loop()
            threading.Thread(target=self._read_engine, daemon=True).start()

        async def on_cleanup(_app) -> None:
            self.inbox.put(("stop",))
            self.process.join(timeout=30)
            if self.process.is_alive():
                self.process.terminate()

        app.on_startup.append(on_startup)
        app.on_cleanup.append(on_cleanup)
        return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--engine", choices=["transformers", "fake"], default="transformers")
    parser.add_argument("--block-size", type=int, default=256)
    parser.add_argument("--num-blocks", type=int, default=256)
    parser.add_argument("--max-batch-tokens", type=int, default=1024)
    parser.add_argument("--max-requests-per-batch", type=int, default=64)
    parser.add_argument("--num-layers", type=int, default=32)
    parser.add_argument("--attn-implementation", default=None)
    parser.add_argument("--cuda-graph", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--fake-step-ms", type=float, default=5.0)
    parser.add_argument("--torch-threads", type=int, default=0, help="torch intra-op threads in the engine (0: torch's default)")
    parser.add_argument("--graph-warmup", choices=["full", "engine"], default="full",
                        help="full: capture every padded step shape's CUDA graph before serving (as SGLang captures at "
                             "start-up); engine: transformers' own warmup only, other shapes captured while serving")
    parser.add_argument("--graph-max-seq", type=int, default=2048,
                        help="the full warmup captures the graphs of steps whose longest sequence is up to this many "
                             "tokens (longer ones are captured while serving, and logged to --engine-events)")
    parser.add_argument("--engine-events", help="the engine logs what stalls its loop while serving here, one JSON "
                                                "line each: CUDA graphs captured lazily, garbage collections of 10 ms or more")
    parser.add_argument("--request-log", help="the engine writes one JSON line per finished request here: its clock "
                                              "readings of arrival, leaving the queue, every token and the finish")
    parser.add_argument("--switch-interval-ms", type=float, default=0.0,
                        help="the engine process's interpreter switch interval (0: Python's default of 5 ms)")
    parser.add_argument("--reader-poll-ms", type=float, default=0.0,
                        help="the engine's output thread collects tokens this often (0: on every output)")
    parser.add_argument("--thread-cpu-log", help="the engine logs each of its threads' CPU seconds here once a second")
    args = parser.parse_args()
    settings = EngineSettings(
        engine=args.engine, block_size=args.block_size, num_blocks=args.num_blocks,
        max_batch_tokens=args.max_batch_tokens, max_requests_per_batch=args.max_requests_per_batch,
        num_layers=args.num_layers, attn_implementation=args.attn_implementation,
        use_cuda_graph=None if args.cuda_graph == "auto" else args.cuda_graph == "on", fake_step_ms=args.fake_step_ms,
        torch_threads=args.torch_threads, graph_warmup=args.graph_warmup, request_log=args.request_log,
        graph_max_seq=args.graph_max_seq, engine_events=args.engine_events,
        switch_interval_ms=args.switch_interval_ms, reader_poll_ms=args.reader_poll_ms,
        thread_cpu_log=args.thread_cpu_log,
    )
    face = Face(settings, args.port)
    face.start_engine()
    web.run_app(face.app(), host=args.host, port=args.port, access_log=None, print=lambda *_: print(
        f"face listening on http://{args.host}:{args.port}", flush=True))


if __name__ == "__main__":
    main()
