"""The typer-free fast path (fixer.cli.fast) answers `doctor|plan ... --json` exactly as the full
CLI does, takes exactly the typer command's options from the one table, and hands everything
else (help, unknown or malformed options, bad choices, empty values) to the full CLI."""

from __future__ import annotations

import inspect
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fixer.cli import fast as _fast
from fixer.cli.table import OPTIONS
from fixer.planner.steps import bundled_environments
from tests.helpers.examples import examples

ENVIRONMENTS = sorted(bundled_environments())


def _typer_params(command: str):
    from fixer.cli import doctor, plan

    fn = {"doctor": doctor.doctor_command, "plan": plan.plan_command}[command]
    return tuple(inspect.signature(inspect.unwrap(fn)).parameters)


@pytest.mark.parametrize("command", sorted(_fast.FAST_COMMANDS))
def test_the_fast_commands_take_exactly_the_typer_commands_options(command):
    assert set(_fast.FAST_COMMANDS[command]) == set(_typer_params(command))


def _value(key):
    spec = OPTIONS[key]
    if spec.choices:
        return st.sampled_from(spec.choices)
    return {
        "environment": st.sampled_from(ENVIRONMENTS),
        "torch": st.sampled_from(["2.11.0", "2.5.1"]),
        "cuda": st.sampled_from(["12.6", "13.0"]),
        "keep": st.sampled_from(["torch", "jax"]),
        "tensorflow": st.sampled_from(["2.18.0"]),
        "jax": st.sampled_from(["0.4.35"]),
    }.get(key, st.none())


@st.composite
def argvs(draw, command):
    argv = [command, "--json"]
    keys = [
        k
        for k in _fast.FAST_COMMANDS[command]
        if k not in ("json", "python", "lock", "recipes", "find_links", "index_mirror", "deep")
    ]
    for key in draw(st.lists(st.sampled_from(keys), unique=True, max_size=4)):
        spec = OPTIONS[key]
        if spec.kind == "flag":
            argv.append(spec.flags[0])
            continue
        value = draw(_value(key))
        if value is None:
            continue
        argv += [f"{spec.flags[0]}={value}"] if draw(st.booleans()) else [spec.flags[0], value]
    if "--environment" not in " ".join(argv):
        argv += ["--environment", draw(st.sampled_from(ENVIRONMENTS))]
    return argv


def _full(argv, capsys):
    from fixer.cli import main

    code = main(list(argv))
    return code, capsys.readouterr().out


def _fast_run(argv, capsys):
    code = _fast.run(argv)
    return code, capsys.readouterr().out


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_fast_path_answers_as_the_full_cli(data, capsys):
    argv = data.draw(argvs(data.draw(st.sampled_from(sorted(_fast.FAST_COMMANDS)))))
    assert _fast.parse(argv) is not None, argv
    fast_code, fast_out = _fast_run(argv, capsys)
    full_code, full_out = _full(argv, capsys)
    assert (fast_code, json.loads(fast_out)) == (full_code, json.loads(full_out)), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor"],
        ["doctor", "--help"],
        ["doctor", "-h", "--json"],
        ["doctor", "--json", "--bogus"],
        ["plan", "--json", "--cudnn-from", "nowhere"],
        ["plan", "--json", "--torch", ""],
        ["plan", "--json", "--torch"],
        ["plan", "--json", "--torch", "1", "--torch", "2"],
        ["plan", "--json", "--no-index=yes"],
        ["plan", "extra", "--json"],
        ["apply", "--json"],
        ["doctor", "--json", "--json"],
        [],
    ],
)
def test_anything_else_goes_to_the_full_cli(argv):
    assert _fast.parse(argv) is None
