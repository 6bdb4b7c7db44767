#!/usr/bin/env bash
# Starts the face with each engine variant and runs diagnose.py against it. DIAG_VARIANTS: face flags per variant,
# separated by ';' (default: CUDA graphs off, on, and off with one thread of torch).
HERE="$(cd "$(dirname "$0")" && pwd)"; OUT="${OUT:-/tmp/out}"; export PYTHONUNBUFFERED=1
IFS=';' read -r -a variants <<< "${DIAG_VARIANTS:---cuda-graph off;--cuda-graph on;--cuda-graph off --torch-threads 1}"
n=0
for variant in "${variants[@]}"; do
  n=$((n + 1))
  python3 "$HERE/face.py" --port 30000 $variant --thread-cpu-log "$OUT/threads-$n.jsonl" \
    --request-log "$OUT/requests-$n.jsonl" > "$OUT/face-diag-$n.log" 2>&1 &
  face=$!
  for i in $(seq 1 240); do curl -sf localhost:30000/health >/dev/null && break; sleep 1; done
  echo "variant $n [$variant] ready after ${i}s"
  grep -o '"use_cuda_graph": "[^"]*"\|"switch_interval_s": [0-9.e-]*\|"reader_poll_ms": [0-9.]*' "$OUT/face-diag-$n.log" | head -3 | tr '\n' ' '; echo
  timeout 200 python3 "$HERE/diagnose.py" --label "[$variant]" ${DIAG_ARGS:-}
  kill $face; wait $face
done
