"""The room benchmarks run end to end (tiny sizes, no timing asserted: speed is measured by
running them, not by tests) and count what they promise to count."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_bench(
    tmp_path: Path, scenario: str, *args: str, name: str = "", env: dict[str, str] | None = None
) -> dict:
    name = name or scenario
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
        },
        **(env or {}),
    }
    env["BENCH_RESULTS"] = str(tmp_path)
    env["BENCH_FREE_PORTS"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", f"bench.scenarios.{scenario}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / f"{name}-latest.md").read_text().strip()
    return json.loads((tmp_path / f"{name}-latest.json").read_text())


def test_fanout_against_the_bare_floor_and_the_table_loses_nothing(tmp_path):
    out = run_bench(
        tmp_path,
        "fanout",
        *("--setups", "bare,default", "--players", "3", "--runs", "1", "--seconds", "1"),
    )
    rows = {r["setup"]: r for r in out["results"]}
    assert set(rows) == {"bare", "default"}
    for row in rows.values():
        assert row["lost_total"] == row["seq_gaps_total"] == row["seq_duplicates_total"] == 0
        assert row["median"]["p50"] > 0


def test_a_connect_burst_into_two_rooms_then_everyone_rolls(tmp_path):
    out = run_bench(
        tmp_path,
        "burst",
        *("--setups", "default", "--sockets", "5", "--rooms", "2", "--runs", "1"),
        name="burst-rooms",
    )
    (row,) = out["results"]
    (run,) = row["runs"]
    assert run["hello"] == 5 and run["failed"] == 0
    assert run["rolls_refused"] == 0 and run["roll_deliveries_missing"] == 0


def small_tables_run(tmp_path: Path, setup: str) -> tuple[dict, dict, dict]:
    """Three tables of two players on ``setup``, rolling for 1.5 s: every roll reached both
    sockets of its room, in order. The run's output, its setup's row and its one run."""
    out = run_bench(
        tmp_path,
        "tables",
        *("--setups", setup, "--tables", "3", "--players", "2", "--every", "0.5"),
        *("--seconds", "1.5", "--runs", "1", "--drain", "10"),
    )
    (row,) = out["results"]
    (run,) = row["runs"]
    assert run["sockets"] == 6 and run["not_connected"] == 0
    assert run["rolls"] > 0 and run["received"] == run["rolls"] * 2
    assert row["lost_total"] == row["seq_gaps_total"] == 0
    return out, row, run


def test_many_tables_fed_one_pattern_lose_nothing(tmp_path):
    _out, row, _run = small_tables_run(tmp_path, "default")
    assert row["refused_total"] == 0
    assert len(row["server_rss_mb_each"]) == 1 and row["server_rss_mb_each"][0] > 0


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.nginx
def test_scale_out_serves_many_tables_behind_the_shipped_proxy(tmp_path):
    # The deployed setup's own scratch database beside the tests' (dropped and made again).
    database = urlsplit(os.environ["DATABASE_URL"]).path.lstrip("/") + "_scaleout"
    out = run_bench(
        tmp_path,
        "scaleout",
        *("--setups", "deployed", "--processes", "2", "--tables", "3", "--players", "2"),
        *("--every", "0.5", "--seconds", "1.5", "--drain", "10", "--most", ""),
        env={"BENCH_DATABASE": database, "BENCH_REDIS_URL": os.environ["REDIS_URL"]},
    )
    (row,) = out["results"]
    (run,) = row["runs"]
    assert row["setup"] == "deployed x2" and out["failed"] == []
    assert run["sockets"] == 6 and run["not_connected"] == 0
    assert run["rolls"] > 0 and run["received"] == run["rolls"] * 2
    assert row["lost_total"] == row["seq_gaps_total"] == row["refused_total"] == 0
    assert len(row["server_cpu_ms_per_roll_each"]) == 2 and run["proxy_cpu"] is not None


@pytest.mark.nginx
def test_the_proxied_floor_serves_many_tables_through_the_shipped_proxy(tmp_path):
    """The floor behind nginx, its rooms at the table's socket paths: the proxy's own hop."""
    out, row, run = small_tables_run(tmp_path, "proxied-floor")
    assert row["setup"] == "proxied-floor" and out["failed"] == []
    assert run["proxy_cpu"] is not None


@pytest.mark.postgres
def test_the_round_trips_bench_counts_a_rolls_round_trips_through_a_relay_that_holds_them(
    tmp_path,
):
    database = urlsplit(os.environ["DATABASE_URL"]).path.lstrip("/") + "_round_trips"
    out = run_bench(
        tmp_path,
        "round_trips",
        *("--delay", "0,2", "--rolls", "5"),
        env={"BENCH_DATABASE": database},
    )
    plain, held = out["results"]
    # BEGIN with the seq, the event with COMMIT
    assert plain["round_trips"] == held["round_trips"] == 2
    # Each of them waited for the relay's hold both ways (at least 4 ms a round trip).
    assert held["p50"] - plain["p50"] >= 2 * 4 * 0.9


def test_scale_out_measures_the_floor_first_then_each_count_of_processes():
    from bench.scenarios.tables import setups

    assert setups(["deployed", "default", "bare"], [1, 2, 4]) == [
        ("bare", None),
        ("deployed", 1),
        ("deployed", 2),
        ("deployed", 4),
        ("default", None),
    ]
    assert setups(["spread"], [2]) == [("spread", 2)]


def test_deployed_is_behind_the_proxy_and_spread_is_the_same_processes_without_it():
    """Every benchmark's ``--setups deployed`` is the shipped deployment (nginx in front, each
    room's sockets on one process); ``spread`` alternates a room's sockets between processes."""
    from bench.harness import Setup

    deployed = Setup.named("deployed", "fanout")
    spread = Setup.named("spread", "fanout")
    assert deployed.kind == spread.kind == "deployed"
    assert deployed.client_ports == [deployed.proxy_port] and deployed.proxy_port is not None
    assert spread.proxy_port is None and spread.client_ports == spread.ports == deployed.ports
    assert len(spread.ports) == 2
    assert Setup.named("default", "fanout").proxy_port is None


def test_the_connect_profile_counts_hellos_and_puts_samples_down_to_packages(tmp_path):
    out = run_bench(
        tmp_path, "connects", *("--setups", "default", "--sockets", "5", "--bursts", "1")
    )
    (row,) = out["results"]
    assert row["hello"]["n"] == 5 and row["hello"]["p50"] > 0


def test_a_sample_goes_to_the_package_of_its_innermost_frame():
    from bench.scenarios.connects import attribute

    main = "thread (1): MainThread"
    rows = [
        ([main, "run (asyncio/base_events.py:600)", "send (tabletop/delivery.py:90)"], 3),
        ([main, "connect (tabletop/consumers.py:9)", "write (twisted/internet/tcp.py:1)"], 1),
        (["thread (2): ThreadPoolExecutor-0_0", "roll (tabletop/services/rolls.py:1)"], 5),
    ]
    out = attribute(rows)
    assert out["samples"] == 4  # the main thread's only
    assert out["by_package"] == {"the table (tabletop/)": 75.0, "twisted": 25.0}
    assert out["table_code_in_stack"] == 100.0


CASES = {
    "replay": (["--events", "120", "--spectators", "2"], "replays done"),
    "export": (["--events", "120", "--exports", "2"], "200"),
    "sheet": (["--tropes", "60"], "sheet 400"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_hostile_benchs_replay_export_and_sheet_cases_run(tmp_path, case):
    extra, expected = CASES[case]
    out = run_bench(
        tmp_path,
        "hostile",
        *("--case", case, "--configs", "protected", "--runs", "1", "--seconds", "2"),
        *("--drain", "0.5", "--settle", "0.5", "--players", "2", *extra),
        name=f"hostile-{case}",
    )
    run = out["results"][0]["runs"][0]
    assert run["hostile"]["lost"] == 0 and run["calm"]["lost"] == 0
    assert run["hostile"]["outcome"].get(expected), run["hostile"]["outcome"]


def test_opening_a_long_session_on_a_phone_times_the_newest_roll_and_counts_the_replay(tmp_path):
    out = run_bench(tmp_path, "opening", *("--rolls", "5", "--runs", "1", "--rates", "1"))
    (run,) = out["results"]["1.0"]
    assert run["newest"] >= run["hello"] > 0
    assert run["bytes"] > 0 and 2 <= run["messages"] <= 8  # hello, then the replay in frames
    assert run["ScriptDuration"] > 0


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "kind",
    [
        "daphne-floor",
        pytest.param(
            "uvicorn-floor",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("uvicorn") is None,
                reason="uvicorn comes with the benchmarks' extra: pip install -e '.[bench]'",
            ),
        ),
    ],
)
async def test_the_socket_stacks_floor_answers_as_the_bare_server_does(kind, monkeypatch, tmp_path):
    """The ASGI floor (bench/servers/bare_asgi.py), under daphne as the table is served and
    under uvicorn: hello first, ping answered by pong, a roll sent to every socket of its room
    with the room's next seq, the sender's copy with its ref."""
    import json

    from websockets.asyncio.client import connect

    from bench import harness

    monkeypatch.setenv("BENCH_FREE_PORTS", "1")
    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    with harness.Setup(kind, "floor-test") as setup:
        (code,) = setup.new_rooms()
        async with (
            connect(setup.url(code, "t0")) as roller,
            connect(setup.url(code, "t1")) as other,
        ):
            for ws in (roller, other):
                assert json.loads(await ws.recv()) == {
                    "type": "hello",
                    "role": "player",
                    "last_seq": 0,
                    "state": {},
                }
            await roller.send(json.dumps({"type": "ping", "ref": "p1"}))
            assert json.loads(await roller.recv()) == {"type": "pong", "ref": "p1", "last_seq": 0}
            await roller.send(json.dumps({"type": "roll", "ref": "r1", "client_seed": "s"}))
            own, seen = json.loads(await roller.recv()), json.loads(await other.recv())
    assert own["ref"] == "r1" and "ref" not in seen
    assert own["seq"] == seen["seq"] == 1 and seen["kind"] == "roll"
    assert seen["data"]["client_seed"] == "s" and seen["data"]["total"] == sum(
        d["value"] for d in seen["data"]["dice"]
    )
