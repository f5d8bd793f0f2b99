#!/usr/bin/env bash
# Run the engine benchmark the way README's "Engine benchmark" section does (`make bench`):
# start tests/peers/servers/fast_mcp.py, read the URL it prints, run the engine benchmark
# (tests/bench/engine.py) against it with 1000 checks and 50 in flight, print its JSON, and
# stop the server. Extra arguments go to the benchmark (e.g. --compare-sdk --sdk-probes 300).
#
# Server and client are pinned to cores of their own when taskset and two cores are there: the
# benchmark reads its own process CPU, and a server sharing its core would blur it.
# BENCH_PROBES and BENCH_CONCURRENCY override the defaults; PYTHON the interpreter (.venv's).
#
# BENCH_BASELINE=<git revision> compares instead: that revision's tree (git archive into a
# temporary directory, run with this tree's interpreter) and this tree take turns against the
# one server, BENCH_ROUNDS times (default 5). It prints a line per run and the median CPU per
# check of each with their ratio. On a shared machine only runs of one session compare.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python="${PYTHON:-.venv/bin/python}"

server_cpu=()
client_cpu=()
if command -v taskset >/dev/null 2>&1 && (($(nproc) >= 2)); then
    server_cpu=(taskset -c 1)
    client_cpu=(taskset -c 0)
fi

url_file=$(mktemp -t uptimy-bench-url.XXXXXX)
"${server_cpu[@]}" "$python" tests/peers/servers/fast_mcp.py >"$url_file" &
server=$!
stop_server() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -f "$url_file"
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The server prints its URL (it binds port 0) once it listens.
url=""
for _ in $(seq 100); do
    url=$(head -n 1 "$url_file")
    [[ -n "$url" ]] && break
    if ! kill -0 "$server" 2>/dev/null; then
        echo "bench: fast_mcp.py exited before printing its URL" >&2
        exit 1
    fi
    sleep 0.1
done
[[ -n "$url" ]] || { echo "bench: fast_mcp.py printed no URL within 10 s" >&2; exit 1; }

echo "bench: server at $url" >&2
bench_args=(--probes "${BENCH_PROBES:-1000}" --concurrency "${BENCH_CONCURRENCY:-50}" --json "$@")
if [[ -z "${BENCH_BASELINE:-}" ]]; then
    "${client_cpu[@]}" "$python" tests/bench/engine.py "$url" "${bench_args[@]}"
    exit
fi

here=$(pwd)
python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python")
baseline=$(mktemp -d -t uptimy-bench-baseline.XXXXXX)
trap 'stop_server; rm -rf "$baseline"' EXIT
git archive "$BENCH_BASELINE" | tar -x -C "$baseline"

# Run one tree's benchmark; print its figures as one JSON line. Before 3631caf the benchmark
# was the module probes.bench (run with -m: probes/ holds an http.py that shadows the stdlib's).
run_tree() {
    local tree=$1
    local bench=(tests/bench/engine.py)
    [[ -f "$tree/tests/bench/engine.py" ]] || bench=(-m probes.bench)
    (cd "$tree" && PYTHONPATH="$tree" "${client_cpu[@]}" "$python" "${bench[@]}" "$url" "${bench_args[@]}") |
        "$python" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["uptimy"]))'
}

runs=$(mktemp -t uptimy-bench-runs.XXXXXX)
trap 'stop_server; rm -rf "$baseline" "$runs"' EXIT
for round in $(seq "${BENCH_ROUNDS:-5}"); do
    for tree in baseline this; do
        figures=$(run_tree "$([[ $tree == baseline ]] && echo "$baseline" || echo "$here")")
        echo "round $round $tree $figures"
        echo "$tree $figures" >>"$runs"
    done
done
"$python" - "$runs" "$BENCH_BASELINE" <<'SUMMARY'
import json, statistics, sys

runs = {"baseline": [], "this": []}
for line in open(sys.argv[1]):
    tree, figures = line.split(" ", 1)
    runs[tree].append(json.loads(figures))
medians = {tree: statistics.median(run["cpu_ms_per_check"] for run in figures) for tree, figures in runs.items()}
print(
    f"median CPU per check: baseline ({sys.argv[2]}) {medians['baseline']:.3f} ms, this tree "
    f"{medians['this']:.3f} ms, ratio {medians['this'] / medians['baseline']:.3f}"
)
SUMMARY
