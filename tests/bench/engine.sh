#!/usr/bin/env bash
# Run the engine benchmark the way docs/benchmarks.md's "Engine" section does (`make bench`):
# start tests/peers/servers/fast_mcp.py, read the URL it prints, run the engine benchmark
# (tests/bench/engine.py) against it with 1000 checks and 50 in flight, print its JSON, and
# stop the server. Extra arguments go to the benchmark (e.g. --compare-sdk --sdk-probes 300).
#
# Server and client are pinned to cores of their own when taskset and two cores are there: the
# benchmark reads its own process CPU, and a server sharing its core would blur it.
# BENCH_PROBES and BENCH_CONCURRENCY override the defaults; PYTHON the interpreter (.venv's).
#
# BENCH_BASELINE=<git revision> compares instead: that revision's tree (git archive into a
# temporary directory, run with this tree's interpreter) and this tree run at the same time, on
# the same client core, against the one server, BENCH_ROUNDS times (default 5). Run together,
# both meet whatever else the machine is doing alike, so the ratio of their CPU per check holds
# steady (within a few percent on a busy machine where runs one after the other scatter by
# 30%); checks/s and the absolute CPU figures are not a single run's. It prints a line per run
# and the median of the rounds' ratios.
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

runs=$(mktemp -d -t uptimy-bench-runs.XXXXXX)
trap 'stop_server; rm -rf "$baseline" "$runs"' EXIT
for round in $(seq "${BENCH_ROUNDS:-5}"); do
    run_tree "$baseline" >"$runs/baseline" &
    baseline_run=$!
    run_tree "$here" >"$runs/this" &
    this_run=$!
    wait "$baseline_run"
    wait "$this_run"
    for tree in baseline this; do
        echo "round $round $tree $(cat "$runs/$tree")"
        echo "$round $tree $(cat "$runs/$tree")" >>"$runs/all"
    done
done
"$python" - "$runs/all" "$BENCH_BASELINE" <<'SUMMARY'
import collections, json, statistics, sys

rounds = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    round_, tree, figures = line.split(" ", 2)
    rounds[round_][tree] = json.loads(figures)["cpu_ms_per_check"]
ratios = [cpu["this"] / cpu["baseline"] for cpu in rounds.values()]
print(
    f"CPU per check, this tree to {sys.argv[2]}: median ratio {statistics.median(ratios):.3f} "
    f"over {len(ratios)} rounds ({min(ratios):.3f}-{max(ratios):.3f})"
)
SUMMARY
