"""``manage.py roll`` and ``manage.py odds``: the command-line contract (docs/rules.md, "The command
line")."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from django.core.management import call_command

from rules.engines import FairStream, system_ids
from rules.engines.fair import seed_from_number

ROOT = Path(__file__).resolve().parents[2]

TYPICAL = {
    "generic": {"notation": "4d6kh3+2", "difficulty": 12},
    "zoria": {"check": "1d20+7", "action_dice": ["d8", "d8"], "dc": 15},
    "roll-and-keep": {"roll": 6, "keep": 3, "difficulty": 7},
    "d6-chance": {"dice": 4, "bonus": 2, "difficulty": 15},
    "discordian": {"pool": ["d6", "d6", "d8"], "tn": 5, "challenge": 2, "discord": 7},
    "action-dice": {"action_dice": 2, "skill_dice": 3, "difficulty": 8},
}


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            call_command(*args)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_every_system_has_a_typical_request():
    assert set(TYPICAL) == set(system_ids())


@pytest.mark.parametrize("system", list(TYPICAL))
def test_roll_prints_one_result_per_line_with_the_contract_keys(system):
    code, out, err = run("roll", system, json.dumps(TYPICAL[system]), "--seed", "3", "--count", "4")
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert len(lines) == 4
    for line in lines:
        result = json.loads(line)
        assert {
            "system",
            "request",
            "dice",
            "total",
            "successes",
            "outcome",
            "flags",
            "text",
        } <= set(result)
        assert result["system"] == system
        assert result["outcome"] in {"success", "failure", None}
        assert all({"die", "value", "role", "sides"} <= set(d) for d in result["dice"])


@pytest.mark.parametrize("system", list(TYPICAL))
def test_seeded_rolls_are_reproducible_and_follow_the_stream(system):
    args = ("roll", system, json.dumps(TYPICAL[system]), "--seed", "42", "--count", "3")
    first, second = run(*args)[1], run(*args)[1]
    assert first == second
    for seq, line in enumerate(first.strip().splitlines(), start=1):
        dice = json.loads(line)["dice"]
        stream = FairStream(seed_from_number(42), "", seq)
        expected = [stream.roll(d["sides"]) - (2 if d["die"] == "dF" else 0) for d in dice]
        assert [d["value"] for d in dice] == expected


def test_unseeded_rolls_differ():
    args = ("roll", "generic", '{"notation": "10d100"}', "--count", "2")
    a, b = run(*args)[1].splitlines()
    assert json.loads(a)["dice"] != json.loads(b)["dice"]


@pytest.mark.parametrize("system", list(TYPICAL))
def test_odds_prints_the_contract_shape(system):
    code, out, _ = run("odds", system, json.dumps(TYPICAL[system]))
    assert code == 0
    answer = json.loads(out)
    assert set(answer) == {"system", "request", "outcome", "distribution", "p_success", "events"}
    assert answer["outcome"] in {"total", "net_successes", "successes"}
    assert abs(sum(answer["distribution"].values()) - 1) < 1e-9
    assert 0 <= answer["p_success"] <= 1
    assert all(0 <= p <= 1 for p in answer["events"].values())


def test_odds_of_2d6_against_hand_computed_values():
    answer = json.loads(run("odds", "generic", '{"notation": "2d6", "difficulty": 10}')[1])
    assert answer["distribution"]["7"] == pytest.approx(6 / 36, abs=1e-12)
    assert answer["p_success"] == pytest.approx(6 / 36, abs=1e-12)
    assert answer["request"] == {"notation": "2d6", "difficulty": 10}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("roll", "generic", '{"notation": "2d"}'), "notation"),
        (("roll", "generic", '{"notation": "1001d6"}'), "notation"),
        (("roll", "generic", "{nope"), "request"),
        (("roll", "nope", "{}"), "system"),
        (("odds", "zoria", '{"check": "1d20", "action_dice": ["d7"]}'), "action_dice.0"),
        (("odds", "d6-chance", '{"dice": 2, "actions": 2}'), "actions"),
        (("odds", "discordian", '{"pool": ["d6"], "tn": 7}'), "tn"),
        (("roll", "roll-and-keep", '{"roll": 5, "difficulty": 7}'), "keep"),
        (("roll", "roll-and-keep", '{"roll": 5, "keep": 2}'), "difficulty"),
        (("roll", "generic", '{"notation": "1d6"}', "--count", "0"), "count"),
    ],
)
def test_bad_requests_print_one_error_line_and_exit_2(args, field):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: ")


def test_exit_status_through_a_real_process():
    proc = subprocess.run(
        [sys.executable, "manage.py", "roll", "generic", '{"notation": "d6+"}'],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert (
        proc.returncode == 2 and proc.stderr.startswith("error: notation: ") and proc.stdout == ""
    )
    proc = subprocess.run(
        [sys.executable, "manage.py", "odds", "generic", '{"notation": "d6"}'],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["distribution"]["6"] == pytest.approx(
        1 / 6
    )


def test_argument_errors_are_one_line_too():
    code, out, err = run("roll", "generic", '{"notation": "d6"}', "--seed", "abc")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: seed: ")
