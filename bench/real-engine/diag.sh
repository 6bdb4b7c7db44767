#!/usr/bin/env bash
# Starts the face with each engine variant and runs diagnose.py against it.
HERE="$(cd "$(dirname "$0")" && pwd)"; OUT="${OUT:-/tmp/out}"; export PYTHONUNBUFFERED=1
for variant in "" "--torch-threads 1" "--cuda-graph on"; do
  python3 "$HERE/face.py" --port 30000 $variant > "$OUT/face-diag.log" 2>&1 &
  face=$!
  for i in $(seq 1 240); do curl -sf localhost:30000/health >/dev/null && break; sleep 1; done
  grep -o '"cpu_affinity[^}]*' "$OUT/face-diag.log" | head -1; grep -o '"use_cuda_graph": "[^"]*"' "$OUT/face-diag.log" | head -1
  timeout 150 python3 "$HERE/diagnose.py" --label "[$variant]"
  kill $face; wait $face
done
