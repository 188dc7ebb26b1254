"""The cycle collector's pauses, counted across the threads that take them."""

import gc
import threading

from turnmark.shell.collector import collector_paused, promote


def test_the_last_pause_to_end_restores_the_collector() -> None:
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled(), "another pause is still on"
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_pauses_on_other_threads_end_with_the_collector_on() -> None:
    started = threading.Barrier(4)

    def pause() -> None:
        with collector_paused():
            started.wait()

    threads = [threading.Thread(target=pause) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_promote_leaves_nothing_young_and_nothing_frozen() -> None:
    made = [[index] for index in range(5_000)]
    promote()
    assert gc.get_count()[0] < 100, "what was made is old now"
    assert gc.get_freeze_count() == 0
    oldest = {id(item) for item in gc.get_objects(generation=2)}
    assert all(id(item) in oldest for item in made[:3]), "in the oldest generation, not just collected"
