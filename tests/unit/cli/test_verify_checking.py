"""`verify` says which frameworks it checks while their children run (fixer.render.progress
checking_text through the CLI's ConsoleBoard): before the results, every framework it checks is
named; with --json the line goes to stderr and stdout stays one JSON document. The GPU edge (the
children's results, recorded on the GPU machine: tests/helpers/gpu_records.py) is replayed."""

from __future__ import annotations

import json

import pytest
from fixer.cli import main
from tests.helpers.gpu_records import verify_runs

RUNS = dict(verify_runs())


def _replay(monkeypatch: pytest.MonkeyPatch, results) -> None:
    monkeypatch.setattr("fixer.verifier.checks.verify", lambda *a, **k: list(results))
    monkeypatch.setattr(
        "fixer.verifier.checks.installed_frameworks",
        lambda *a, **k: tuple(r.framework for r in results),
    )


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("scenario", sorted(RUNS))
def test_verify_names_what_it_checks_before_the_results(scenario, as_json, capsys, monkeypatch):
    results = RUNS[scenario]
    _replay(monkeypatch, results)
    capsys.readouterr()
    main(["verify", "--json"] if as_json else ["verify"])
    captured = capsys.readouterr()
    said = captured.err if as_json else captured.out
    checking = [line for line in said.splitlines() if line.strip().startswith("checking ")]
    assert len(checking) == 1, said
    for r in results:
        assert r.framework in checking[0]
    if as_json:
        json.loads(captured.out)  # stdout: the JSON alone
    else:
        # said first, then the results
        first_result = min(
            said.find(r.framework, said.find("\n", said.find("checking "))) for r in results
        )
        assert said.find("checking ") < first_result


def test_a_named_framework_is_what_it_says(capsys, monkeypatch):
    scenario = next(name for name, res in RUNS.items() if len(res) > 1)
    results = RUNS[scenario][:1]
    _replay(monkeypatch, results)
    main(["verify", "--framework", results[0].framework])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("checking "))
    assert line.strip().startswith(f"checking {results[0].framework} on the GPU")
