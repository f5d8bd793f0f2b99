"""uptimyctl: monitors as code, a client of Uptimy's REST API.

The package is a client: it talks to the API over HTTP (httpx) and never imports Django, the
ORM or an app's Django parts (an import contract in pyproject.toml holds it to that). It reuses
the engine's pure config parsers (``probes.checks``) so a file is checked against the same
rules the API applies before anything is sent.
"""

# The product text numbers uptimyctl on its own line: 1.11.0 is the first version that takes
# `type: mcp`. The Python package (server and engine) is still 0.1.0, which the engine's
# User-Agent carries; bumping it is a release decision, not this client's.
CTL_VERSION = "1.11.0"
