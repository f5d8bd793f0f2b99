"""gunicorn's hooks: a web worker freezes what it loaded at start."""

from __future__ import annotations

import gc

from uptimy.gunicorn_conf import post_worker_init


def test_a_started_worker_puts_what_it_loaded_out_of_the_collectors_sight():
    try:
        post_worker_init(object())
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
