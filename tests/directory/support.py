"""The loopback registry's parts: recorded pages, scripted answers, the requests it saw, a sleeper that never waits."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).with_name("fixtures")


def page(name: str) -> dict[str, Any]:
    """Return a recorded registry page (tests/directory/fixtures/<name>.json)."""
    return json.loads((FIXTURES / f"{name}.json").read_text())


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json(cls, payload: Any) -> Answer:
        return cls(200, json.dumps(payload).encode(), (("Content-Type", "application/json"),))


@dataclass(frozen=True)
class Request:
    path: str
    query: dict[str, str]
    user_agent: str
    authorization: str = ""


@dataclass
class RegistryServer:
    """Answer each request by its path's route or the next scripted answer (404 once they run out), and record it."""

    url: str = ""
    answers: list[Answer] = field(default_factory=list)
    # Answered every time their path is asked, before the scripted answers.
    routes: dict[str, Answer] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, *answers: Answer | dict[str, Any]) -> None:
        self.answers.extend(a if isinstance(a, Answer) else Answer.json(a) for a in answers)

    def next_answer(self, request: Request) -> Answer:
        with self.lock:
            self.requests.append(request)
            if request.path in self.routes:
                return self.routes[request.path]
            return self.answers.pop(0) if self.answers else Answer(404, b'{"error": "no page"}')


@dataclass
class Sleeps:
    """The client's sleeper: records each wait instead of waiting."""

    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
