"""Work over many conversations on worker processes: the same results, in order, as in one process."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import REPO
from turnmark.core.search.scopes import DEFAULT_SCOPES
from turnmark.core.search.terms import parse_query
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell import collector
from turnmark.shell.errors import WorkerDied
from turnmark.shell.storage.cache_db import cache_path
from turnmark.shell.storage.workspace import list_conversations, require_workspace
from turnmark.shell.usecases import finding, listing, parallel, summarize_all, worker_pool
from turnmark.shell.usecases.catchup_report import CatchupOptions


@pytest.fixture(autouse=True, params=["fork", "spawn"])
def started_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test with forked workers and with fresh ones (a process with other threads running)."""
    monkeypatch.setattr(worker_pool, "start_method", lambda: request.param)
    return str(request.param)


def whose(item: int) -> tuple[int, int]:
    return item, os.getpid()


def whose_slowly(item: int) -> tuple[int, int]:
    time.sleep(0.002)
    return item, os.getpid()


def signals_and_collector(item: int) -> tuple[object, object, bool]:
    with collector.collector_paused():
        paused = gc.isenabled()
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), gc.isenabled() and not paused


def terminate_at_seven(item: int) -> int:
    if item == 7:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    return item


START_METHODS = """
import threading
from turnmark.shell.usecases import worker_pool
alone = worker_pool.start_method()
stop = threading.Event()
other = threading.Thread(target=stop.wait)
other.start()
print(alone, worker_pool.start_method())
stop.set()
"""


def test_workers_are_forked_only_while_no_other_thread_runs() -> None:
    ran = subprocess.run([sys.executable, "-c", START_METHODS], capture_output=True, text=True, check=True, cwd=REPO)
    assert ran.stdout.split() == ["fork", "spawn"]


def test_a_worker_has_the_signals_and_collector_of_a_fresh_process() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with collector.collector_paused():
            results = list(parallel.each(signals_and_collector, range(40), jobs=2))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert set(results) == {(signal.SIG_DFL, signal.SIG_IGN, True)}


def test_a_worker_ended_by_sigterm_is_one_error_even_where_this_process_ignores_it() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with pytest.raises(WorkerDied, match="--jobs 1"):
            list(parallel.each(terminate_at_seven, range(40), jobs=2))
    finally:
        signal.signal(signal.SIGTERM, previous)


def refuse_seven(item: int) -> int:
    if item == 7:
        raise ValueError("seven")
    return item


def test_workers_share_the_items_and_keep_their_order() -> None:
    results = list(parallel.each(whose, range(40), jobs=2))
    assert [item for item, _ in results] == list(range(40))
    assert os.getpid() not in {pid for _, pid in results}


@pytest.mark.parametrize("chunk", [2, 7, parallel.QUICK])
def test_items_handed_out_in_chunks_come_back_each_once_in_order(chunk: int) -> None:
    results = list(parallel.each(whose_slowly, range(103), jobs=2, chunk=chunk))
    assert [item for item, _ in results] == list(range(103))
    assert len({pid for _, pid in results}) == 2


def test_the_items_before_a_failing_one_in_its_chunk_still_come_back() -> None:
    results = parallel.each(refuse_seven, range(40), jobs=2, chunk=5)
    assert [next(results) for _ in range(7)] == list(range(7))
    with pytest.raises(ValueError, match="seven") as raised:
        next(results)
    assert "refuse_seven" in "".join(raised.value.__notes__)


def test_closing_early_with_chunks_hands_out_no_more_than_the_chunks_ahead(tmp_path: Path) -> None:
    chunk = 3
    results = parallel.each(partial(mark, str(tmp_path)), range(300), jobs=2, chunk=chunk)
    assert next(results) == 0
    results.close()
    assert chunk <= len(list(tmp_path.iterdir())) <= (2 * worker_pool.AHEAD + 2) * chunk


def test_few_items_or_one_job_stay_in_this_process() -> None:
    assert parallel.workers_for(40, 1) == 0
    assert parallel.workers_for(parallel.WORTH_A_WORKER, 8) == 0
    assert parallel.workers_for(10 * parallel.WORTH_A_WORKER, 4) == 4
    assert {pid for _, pid in parallel.each(whose, range(10), jobs=4)} == {os.getpid()}


def test_a_workers_error_reaches_the_caller() -> None:
    with pytest.raises(ValueError, match="seven"):
        list(parallel.each(refuse_seven, range(40), jobs=2))


def test_a_cold_listing_on_two_processes_lists_what_one_process_lists(workspace: Path) -> None:
    root = require_workspace(copies(workspace, 40))

    def cold(jobs: int) -> list[tuple[str, object]]:
        shutil.rmtree(cache_path(root).parent, ignore_errors=True)
        found = listing.list_workspace(root, print, checks=True, jobs=jobs)
        return [(item.ref.display_id, item.row._replace(checked_ns=0)) for item in found]

    alone, shared = cold(1), cold(2)
    assert len(alone) == 44
    assert shared == alone
    warm = listing.list_workspace(root, print, checks=True, jobs=2)
    assert [(item.ref.display_id, item.row._replace(checked_ns=0)) for item in warm] == alone


def copies(workspace: Path, count: int) -> Path:
    conversations = workspace / ".jp" / "conversations"
    sources = sorted(conversations.iterdir())
    for index in range(count):
        shutil.copytree(sources[index % len(sources)], conversations / f"{17100000000 + index}-copy")
    return workspace


def test_offline_summaries_on_two_processes_are_the_summaries_of_one(tmp_path: Path, workspace: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(workspace, other)
    options = CatchupOptions(model="builtin/extractive")
    assert summarize_all.offline(options)
    assert not summarize_all.offline(CatchupOptions(model="ollama/qwen3:4b"))

    def labels(root: Path, jobs: int) -> list[tuple[str, list[str], bool]]:
        refs = list_conversations(require_workspace(copies(root, 36)))
        reports = summarize_all.catch_up_all(refs, options, sequential_ids(), None, on_batch=lambda *_: None, jobs=jobs)
        return [(r.conversation, sorted(r.written.values()), r.done) for r in reports]

    alone, shared = labels(workspace, 1), labels(other, 2)
    assert sum(len(written) for _, written, _ in alone) > 36
    assert shared == alone


def test_an_index_built_on_two_processes_finds_what_one_process_finds(workspace: Path) -> None:
    root = require_workspace(copies(workspace, 40))
    query = parse_query("build").unwrap()

    def cold(jobs: int) -> tuple[list[tuple[object, ...]], int]:
        shutil.rmtree(cache_path(root).parent, ignore_errors=True)
        found = finding.find(root, query, finding.FindOptions(DEFAULT_SCOPES, limit=100, jobs=jobs))
        with sqlite3.connect(cache_path(root)) as connection:
            rows = connection.execute(
                "SELECT conversation, turn_index, turn_id, label, spans, digest FROM turns ORDER BY 1, 2"
            ).fetchall()
        assert found.reindexed > 0
        return rows, found.total

    alone, shared = cold(1), cold(2)
    assert alone[1] > 0
    assert shared == alone


def mark(folder: str, item: int) -> int:
    Path(folder, str(item)).touch()
    time.sleep(0.05)
    return item


def die_at_seven(item: int) -> int:
    if item == 7:
        os._exit(3)
    return item


def test_closing_early_hands_out_no_more_work(tmp_path: Path) -> None:
    results = parallel.each(partial(mark, str(tmp_path)), range(200), jobs=2)
    assert next(results) == 0
    results.close()
    started = len(list(tmp_path.iterdir()))
    assert 1 <= started <= 2 * worker_pool.AHEAD + 2


def test_a_worker_that_dies_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(WorkerDied, match="--jobs 1"):
        list(parallel.each(die_at_seven, range(40), jobs=2))


CTRL_C = """
import sys
from functools import partial
from tests.shell.usecases.test_parallel import mark
from turnmark.shell.usecases import parallel, worker_pool
worker_pool.start_method = lambda: sys.argv[2]
taken = 0
try:
    for item in parallel.each(partial(mark, sys.argv[1]), range(400), jobs=2):
        taken += 1
        print(item, flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {taken}", flush=True)
"""


def test_ctrl_c_stops_the_workers_after_what_they_were_handed(tmp_path: Path, started_by: str) -> None:
    runner = subprocess.Popen(
        [sys.executable, "-c", CTRL_C, str(tmp_path), started_by],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=REPO,
    )
    assert runner.stdout is not None
    printed = [runner.stdout.readline() for _ in range(3)]
    os.killpg(runner.pid, signal.SIGINT)
    out, err = runner.communicate(timeout=60)
    assert printed == ["0\n", "1\n", "2\n"]
    last = out.splitlines()[-1]
    assert last.startswith("interrupted after "), out
    assert "Traceback" not in err
    taken = int(last.rsplit(" ", 1)[1])
    assert taken < 400
    assert len(list(tmp_path.iterdir())) == taken  # every item handed out was finished and came back
