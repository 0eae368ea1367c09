"""The browser tests' server is forked from the test process: it starts as a new process would."""

from __future__ import annotations

import os

from tabletop import consumers, replays
from tabletop.views import export
from tests.browser.conftest import fresh_thread_pools

POOLS = (consumers._prechecks, export._writers, replays._readers)


def test_the_table_thread_pools_run_work_in_a_child_forked_after_they_ran_work() -> None:
    for pool in POOLS:
        assert pool.submit(int, "1").result(timeout=5) == 1  # (the parent now has a thread)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: as FreshDaphneProcess.run, then work for every pool
        ran = b"0"
        try:
            fresh_thread_pools()
            if all(pool.submit(int, "1").result(timeout=3) == 1 for pool in POOLS):
                ran = b"1"
        finally:
            os.write(write, ran)
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"1", "a pool queued the child's work for a thread only its parent had"
