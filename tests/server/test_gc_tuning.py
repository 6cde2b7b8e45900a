"""The garbage collector set-up of ``parlour serve`` (a process-wide setting: restored after the test)."""

from __future__ import annotations

import gc

from server.cli import GC_YOUNG_THRESHOLD, tune_garbage_collector


def test_tuning_freezes_start_up_objects_and_raises_the_young_threshold() -> None:
    threshold = gc.get_threshold()
    try:
        tune_garbage_collector()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *threshold[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
