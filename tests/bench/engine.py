"""Measure what Uptimy's MCP check costs the machine that runs it.

``python tests/bench/engine.py URL --probes N --concurrency C [--json] [--compare-sdk]`` runs N
checks against URL, at most C in flight, in this one process, and reports probes per second,
client CPU milliseconds per check (this process's user + system time from getrusage, so the
server's CPU is not counted when it runs in another process, also given apart with the minor
page faults per check) and peak RSS.

With ``--compare-sdk`` it then measures, in the same run and against the same URL, the
official MCP SDK client (PyPI ``mcp``, a dev/test dependency imported only here) doing the
same exchange (initialize, notifications/initialized, tools/list, DELETE): (a) as its
documentation shows it, ``streamable_http_client(url)`` per check, which builds an HTTP client
per check, and (b) sharing one HTTP client between checks. It prints the CPU ratios.

Point it at a cheap server on another core (tests/peers/servers/fast_mcp.py under
``taskset -c 1``): the SDK server costs 5-7 ms of CPU per check, more than the client. The
engine gets ``allow_private=True`` by default because benchmarks run on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import platform
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from probes.checks.mcp import McpConfig, parse_mcp_config
from probes.config import ConfigError
from probes.runner import ProbeEnv, run_check
from probes.types import Status

CheckFn = Callable[[], Awaitable[str]]


def _usage() -> resource.struct_rusage:
    return resource.getrusage(resource.RUSAGE_SELF)


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes; the benchmark targets Linux workers).
    scale = 1 / (1024 * 1024) if sys.platform == "darwin" else 1 / 1024
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale, 1)


async def measure(check: CheckFn, probes: int, concurrency: int, warmup: int) -> dict[str, Any]:
    """Run ``check`` ``probes`` times with at most ``concurrency`` in flight; return the figures."""
    for _ in range(warmup):
        await check()
    results: collections.Counter[str] = collections.Counter()
    in_flight = 0
    peak_in_flight = 0
    semaphore = asyncio.Semaphore(concurrency)

    async def one() -> None:
        nonlocal in_flight, peak_in_flight
        async with semaphore:
            in_flight += 1
            peak_in_flight = max(peak_in_flight, in_flight)
            try:
                results[await check()] += 1
            except Exception as exc:  # a client that raises is counted, not fatal to the run
                results[f"error: {type(exc).__name__}"] += 1
            finally:
                in_flight -= 1

    gc.collect()
    usage0, wall0 = _usage(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(probes)))
    usage, wall = _usage(), time.perf_counter() - wall0
    user = usage.ru_utime - usage0.ru_utime
    system = usage.ru_stime - usage0.ru_stime
    return {
        "probes": probes,
        "concurrency": concurrency,
        "peak_in_flight": peak_in_flight,
        "wall_s": round(wall, 3),
        "probes_per_second": round(probes / wall, 1) if wall else None,
        "cpu_ms_per_check": round((user + system) * 1000 / probes, 3),
        # The split and the page faults find kernel-side costs (memory mapped and unmapped
        # per read, say) that an instruction count of the Python code never shows.
        "user_ms_per_check": round(user * 1000 / probes, 3),
        "system_ms_per_check": round(system * 1000 / probes, 3),
        "page_faults_per_check": round((usage.ru_minflt - usage0.ru_minflt) / probes, 2),
        "results": dict(sorted(results.items())),
    }


def uptimy_check(config: McpConfig, env: ProbeEnv) -> CheckFn:
    async def check() -> str:
        outcome = await run_check(config, env)
        if outcome.status is Status.UP:
            return "up"
        return f"down: {outcome.kind.value if outcome.kind else '?'}"

    return check


def sdk_checks(url: str) -> tuple[CheckFn, CheckFn, Callable[[], Awaitable[None]]]:
    """Return the SDK client's check with its defaults, with one shared client, and a closer."""
    # Imported here only: the SDK is a dev/test dependency, never needed by the engine.
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def exchange(http_client: Any) -> str:
        async with (
            streamable_http_client(url, http_client=http_client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.list_tools()
        return "up" if result.tools is not None else "down"

    shared = create_mcp_http_client()

    async def defaults() -> str:
        return await exchange(None)

    async def shared_client() -> str:
        return await exchange(shared)

    async def close() -> None:
        await shared.aclose()

    return defaults, shared_client, close


async def run(args: argparse.Namespace, config: McpConfig) -> dict[str, Any]:
    env = ProbeEnv(allow_private=args.allow_private)
    warmup = min(args.warmup, args.probes)
    report: dict[str, Any] = {
        "url": config.uri,
        "python": platform.python_version(),
        "uptimy": await measure(uptimy_check(config, env), args.probes, args.concurrency, warmup),
    }
    # ru_maxrss only grows: read it before the SDK (and its imports) can raise it.
    report["uptimy"]["peak_rss_mb"] = _peak_rss_mb()
    if args.compare_sdk:
        sdk_probes = args.sdk_probes or args.probes
        defaults, shared, close = sdk_checks(config.uri)
        try:
            report["sdk_defaults"] = await measure(defaults, sdk_probes, args.concurrency, warmup)
            report["sdk_shared_client"] = await measure(shared, sdk_probes, args.concurrency, warmup)
        finally:
            await close()
        ours = report["uptimy"]["cpu_ms_per_check"] or float("nan")
        report["cpu_ratio"] = {
            "sdk_defaults_vs_uptimy": round(report["sdk_defaults"]["cpu_ms_per_check"] / ours, 2),
            "sdk_shared_client_vs_uptimy": round(report["sdk_shared_client"]["cpu_ms_per_check"] / ours, 2),
        }
        report["peak_rss_mb_after_sdk"] = _peak_rss_mb()
    return report


def human(report: dict[str, Any]) -> str:
    lines = [f"target {report['url']}"]
    for key, label in (
        ("uptimy", "uptimy check"),
        ("sdk_defaults", "SDK, client per check"),
        ("sdk_shared_client", "SDK, shared client"),
    ):
        if key not in report:
            continue
        figures = report[key]
        line = (
            f"{label:24} {figures['probes']} checks, {figures['concurrency']} in flight: "
            f"{figures['probes_per_second']} checks/s, {figures['cpu_ms_per_check']} ms CPU per check "
            f"({figures['user_ms_per_check']} user, {figures['system_ms_per_check']} system, "
            f"{figures['page_faults_per_check']} page faults)"
        )
        if "peak_rss_mb" in figures:
            line += f", peak RSS {figures['peak_rss_mb']} MB"
        lines.append(line)
        if set(figures["results"]) != {"up"}:
            lines.append(f"{'':24} results: {figures['results']}")
    if "cpu_ratio" in report:
        ratio = report["cpu_ratio"]
        lines.append(
            f"CPU per check vs uptimy: SDK with defaults {ratio['sdk_defaults_vs_uptimy']}x, "
            f"SDK with a shared client {ratio['sdk_shared_client_vs_uptimy']}x"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python tests/bench/engine.py", description=__doc__.splitlines()[0])
    parser.add_argument("url", help="an MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--probes", type=int, default=1000, metavar="N", help="checks to run (default 1000)")
    parser.add_argument(
        "--concurrency", type=int, default=50, metavar="C", help="at most C in flight (default 50)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--compare-sdk", action="store_true", help="also measure the official SDK client")
    parser.add_argument(
        "--sdk-probes", type=int, default=0, metavar="N", help="SDK checks per mode (default: N)"
    )
    parser.add_argument(
        "--warmup", type=int, default=20, metavar="N", help="unmeasured checks first (default 20)"
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, metavar="SECONDS", help="per check (default 10)"
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="send this header on every check (repeatable): measures a check with a key, whose "
        "value the engine redacts from everything the server says",
    )
    parser.add_argument(
        "--allow-private",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="let the address guard pass loopback and private targets (default on: benchmarks run on loopback)",
    )
    args = parser.parse_args(argv)
    if args.probes < 1 or args.concurrency < 1 or args.sdk_probes < 0 or args.warmup < 0:
        parser.error("--probes and --concurrency must be at least 1; --sdk-probes and --warmup at least 0")
    if any(":" not in header for header in args.header):
        parser.error("--header takes 'NAME: VALUE'")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        headers = dict((part.strip() for part in header.split(":", 1)) for header in args.header)
        config = parse_mcp_config({"uri": args.url, "timeout": args.timeout, "headers": headers})
    except ConfigError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    report = asyncio.run(run(args, config))
    print(json.dumps(report, indent=2) if args.json else human(report))
    failed = any(
        set(report[key]["results"]) != {"up"}
        for key in ("uptimy", "sdk_defaults", "sdk_shared_client")
        if key in report
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
