"""The status pages' pure rules and renderers: plain values in, plain values (str, dict, bytes) out.

Pages, the public JSON API, feeds and badges call these with values their selectors read; nothing
here touches the ORM, settings, Django or another app above the engine (an import contract in
pyproject.toml holds that, tests/test_architecture.py proves it breaks).

- :mod:`.vocabulary`: Uptimy's statuses in Statuspage's words, and the page's overall status.
- :mod:`.bars`: the 90-day bars and the uptime figures, from plain intervals.
- :mod:`.strip`, :mod:`.chart`, :mod:`.badges`: the SVGs (and the shields.io endpoint JSON).
- :mod:`.statuspage_api`: the shapes of Atlassian Statuspage's public ``/api/v2`` JSON.
- :mod:`.etag`: the canonical JSON body and its strong ETag.
"""
