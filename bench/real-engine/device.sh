#!/usr/bin/env bash
# Runs the harness on a GPU machine that has Python (torch, transformers, aiohttp) but no Node and no network.
# Expects beside it (see README.md): base.tar.xz (a Node binary and servelab's production node_modules) and
# servelab.tar.xz (dist/, profiles/, package.json). Usage: device.sh check|bench|real|calibrate|all  (results under $OUT)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT" /tmp/sl
cd /tmp/sl
CARRY="${CARRY:-$HERE}"  # where base.tar.xz and servelab.tar.xz lie
tar -xJf "$CARRY/base.tar.xz" && tar -xJf "$CARRY/servelab.tar.xz" -C servelab || exit 1
export PATH="/tmp/sl/node/bin:$PATH" PYTHONUNBUFFERED=1
SERVELAB="node /tmp/sl/servelab/dist/src/cli/main.js"
mode="${1:-all}"
echo "== environment"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
node --version; python3 -c 'import sys, torch, transformers, aiohttp; print(sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__, "aiohttp", aiohttp.__version__, "cuda", torch.cuda.is_available())'
python3 -c 'import transformers, inspect; from transformers import ContinuousBatchingConfig as C; import dataclasses; print("ContinuousBatchingConfig fields:", [f.name for f in dataclasses.fields(C)])' 2>&1 | tail -1
if [ "$mode" = check ] || [ "$mode" = all ]; then
  echo "== engine start and a smoke run"
  python3 "$HERE/face.py" --port 30000 > "$OUT/face-check.log" 2>&1 &
  face=$!
  for i in $(seq 1 300); do curl -sf localhost:30000/health >/dev/null && break; sleep 1; done
  echo "ready after ${i}s"; grep "engine ready" "$OUT/face-check.log" | cut -c1-1500
  curl -s localhost:30000/generate -d '{"input_ids":[1,2,3,4,5,6,7,8],"sampling_params":{"max_new_tokens":4},"stream":false}'; echo
  $SERVELAB node --target attach --url http://127.0.0.1:30000 --dataset-name random-ids --random-input-len 512 --random-range-ratio 0.25 --random-output-len 48 --request-rate inf --num-prompts 64 --seed 3 --output-dir /tmp/check-run --progress off 2>&1 | tail -25
  kill $face; wait $face
  tail -5 "$OUT/face-check.log"
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
  echo "== GPU bench"; (cd /tmp/sl/servelab && mkdir -p bench && cp -r "$HERE" bench/real-engine && python3 bench/real-engine/gpu_bench.py --json "$OUT/gpu-bench.json")
fi
if [ "$mode" = real ] || [ "$mode" = all ]; then
  echo "== real engine runs"
  rm -rf /tmp/harness  # a machine kept warm between calls still has the last call's runs, which servelab will not overwrite
  python3 "$HERE/driver.py" real --servelab "$SERVELAB" --out /tmp/harness --face-args "${FACE_ARGS:---cuda-graph on}"
  if [ "${SKIP_TWIN:-0}" != 1 ]; then
    python3 "$HERE/driver.py" twin --servelab "$SERVELAB" --out /tmp/harness --profile /tmp/harness/calibrated-measured.json --label twin-measured
    python3 "$HERE/driver.py" twin --servelab "$SERVELAB" --out /tmp/harness --profile /tmp/harness/calibrated-roofline.json --label twin-roofline
  fi
fi
if [ "$mode" = calibrate ]; then
  # Calibration alone, on an idle engine (no node tests): to re-measure with a newer servelab when device time is short.
  echo "== calibration only"
  python3 "$HERE/face.py" --port 30000 --request-log "$OUT/engine-requests.jsonl" --engine-events "$OUT/engine-events.jsonl" ${FACE_ARGS:---cuda-graph on} > "$OUT/face.log" 2>&1 &
  face=$!
  for i in $(seq 1 "${FACE_WAIT_S:-300}"); do curl -sf localhost:30000/health >/dev/null && break; sleep 1; done
  echo "face ready after ${i}s"
  curl -s localhost:30000/server_info > "$OUT/server_info.json"
  timeout "${CALIBRATE_TIMEOUT_S:-900}" $SERVELAB calibrate --url http://127.0.0.1:30000 --output "$OUT/calibrated-roofline.json" \
    --measured-output "$OUT/calibrated-measured.json" --measurements-output "$OUT/calibration-measurements.json" \
    --decode-tokens 16 ${CALIBRATE_ARGS:---repeats 3 --max-batch 64} 2>&1 | tee "$OUT/calibrate.log"
  kill $face; wait $face
fi
# Small files only come back: summaries, plans, profiles, tables and the request records, compressed.
if [ -d /tmp/harness ]; then
  (cd /tmp/harness && tar -cJf "$OUT/harness.tar.xz" --exclude='*.parquet' --exclude='report.html' --exclude='charts' . )
fi
ls -la "$OUT"
