#!/usr/bin/env bash
# Run the engine benchmark the way README's "Engine benchmark" section does (`make bench`):
# start tests/peers/servers/fast_mcp.py, read the URL it prints, run the engine benchmark
# (tests/bench/engine.py) against it with 1000 checks and 50 in flight, print its JSON, and
# stop the server. Extra arguments go to the benchmark (e.g. --compare-sdk --sdk-probes 300).
#
# Server and client are pinned to cores of their own when taskset and two cores are there: the
# benchmark reads its own process CPU, and a server sharing its core would blur it.
# BENCH_PROBES and BENCH_CONCURRENCY override the defaults; PYTHON the interpreter (.venv's).
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
"${client_cpu[@]}" "$python" tests/bench/engine.py "$url" \
    --probes "${BENCH_PROBES:-1000}" --concurrency "${BENCH_CONCURRENCY:-50}" --json "$@"
