"""One JSON contract: every command's --json output, errors and usage errors included, is one
object with `schema` and `command`, valid against the command's schema shipped in the package
(fixer/schemas/COMMAND.json); every bundled environment is valid against environment.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fixer
from fixer.cli import main

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

pytestmark = pytest.mark.smoke
SCHEMAS = Path(fixer.__file__).parent / "schemas"
ENVIRONMENTS = Path(fixer.__file__).parent / "environments"


def _registry():
    from referencing import Registry, Resource

    docs = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    return Registry().with_resources(
        (d["$id"], Resource.from_contents(d)) for d in docs.values()
    ), docs


REGISTRY, DOCS = _registry()


def validate(body, name):
    schema = DOCS[name + ".json"]
    jsonschema.validators.validator_for(schema)(schema, registry=REGISTRY).validate(body)


def _run(capsys, argv):
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    body = json.loads(out)  # exactly one JSON object, nothing else on stdout
    assert isinstance(body, dict) and body["schema"] >= 1, body
    return code, body


CASES = [
    (["doctor", "--environment", "colab-2025-01-tf215"], "doctor"),
    (["doctor", "--environment", "no-such-env"], "doctor"),  # error
    (["doctor", "--no-such-option"], "doctor"),  # usage error
    (["plan", "--environment", "colab-2025-01-tf215"], "plan"),
    (["plan", "--environment", "colab-2026-08", "--torch", "9.9"], "plan"),
    (["plan", "--installer", "npm"], "plan"),
    (["apply", "--dry-run", "--environment", "colab-2025-01-tf215"], "apply"),
    (["apply", "--dry-run", "--environment", "colab-2026-08"], "apply"),  # nothing to do
    (["apply", "--dry-run", "--environment", "colab-2026-08-cpu"], "apply"),  # no GPU
    (["apply", "--environment", "colab-2026-08"], "apply"),  # refused: needs --dry-run
    (["apply", "--find-links", "/nonexistent"], "apply"),
    (["verify", "--python", "/bin/ls"], "verify"),
    (
        ["explain", "--no-detect", "libcudnn_cnn_infer.so.8: cannot open shared object file"],
        "explain",
    ),
    (["explain", "--no-detect", "--file", "/nonexistent"], "explain"),
    (["lock", "--environment", "colab-2026-08", "--find-links", "/nonexistent"], "lock"),
    (["rollback", "--root", "/nonexistent"], "rollback"),
    (["recipes", "list"], "recipes-list"),
    (["recipes", "show", "cudnn"], "recipes-show"),
    (["recipes", "show", "nothing"], "recipes-show"),
    (["recipes", "validate"], "recipes-validate"),
    (["report", "--environment", "h200-pip-cudnn-hidden"], "report"),
    (["report", "--environment", "no-such-env"], "report"),  # error
    (["report", "--html"], "report"),  # usage error: two outputs
    (["report", "--no-such-option"], "report"),  # usage error
    (["debug"], "debug"),  # this machine, read-only
    (["debug", "--no-redact"], "debug"),
    (["debug", "--python", "/nonexistent"], "debug"),  # error
    (["debug", "--no-such-option"], "debug"),  # usage error
    (["fleet", "doctor", "--slurm", "{slurm}"], "fleet-doctor"),
    (["fleet", "doctor", "--slurm", "/nonexistent"], "fleet-doctor"),  # error
    (
        ["fleet", "doctor", "--slurm", "{slurm}", "--nodes", "2"],
        "fleet-doctor",
    ),  # a shell line is not JSON
    (["fleet", "doctor", "--no-such-option"], "fleet-doctor"),  # usage error
    (
        ["fleet", "lock-check", "--lock", "stack.lock.toml", "--slurm", "{slurm}"],
        "fleet-lock-check",
    ),
    (["fleet", "lock-check", "--slurm", "{slurm}"], "fleet-lock-check"),  # error: no --lock
    (["fleet", "lock-check", "--no-such-option"], "fleet-lock-check"),  # usage error
]


@pytest.fixture
def slurm(tmp_path, capsys):
    """A Slurm results directory as the job array writes it: one `doctor --json` file per node
    (written by the real CLI), plus one node whose file is not JSON."""
    out = tmp_path / "slurm"
    out.mkdir()
    for host, name in (("gpu-a", "h200-healthy"), ("gpu-b", "h200-pip-cudnn-hidden")):
        main(["doctor", "--environment", name, "--json"])
        (out / f"{host}.json").write_text(capsys.readouterr().out)
    (out / "gpu-c.json").write_text("{not json")
    return str(out)


@pytest.mark.parametrize("argv,schema", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_every_command_output_is_one_object_valid_against_its_schema(
    argv, schema, capsys, tmp_path, monkeypatch, request
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if "{slurm}" in argv:
        argv = [request.getfixturevalue("slurm") if a == "{slurm}" else a for a in argv]
    code, body = _run(capsys, argv)
    validate(body, schema)
    assert body["command"].replace(" ", "-") == schema
    if "error" in body:
        validate(body, "error")
        assert code == body["exit_code"] == body["error"]["exit_code"] != 0


def test_rollback_with_nothing_to_roll_back(capsys, tmp_path):
    code, body = _run(capsys, ["rollback", "--root", str(tmp_path)])
    validate(body, "rollback")
    assert code == 0 and body["rollback"]["status"] == "nothing-to-do"


def test_apply_has_one_shape_whatever_happened(capsys):
    keys = set()
    outcomes = set()
    for argv in (
        ["apply", "--dry-run", "--environment", "colab-2025-01-tf215"],
        # another machine's plan only with --dry-run: apply never runs it here
        ["apply", "--dry-run", "--environment", "colab-2026-08"],
        ["apply", "--dry-run", "--environment", "colab-2026-08-cpu"],
    ):
        _code, body = _run(capsys, argv)
        keys.add(frozenset(body))
        outcomes.add(body["outcome"])
    assert len(keys) == 1, keys
    assert outcomes == {"dry-run", "nothing-to-do", "no-gpu"}


@pytest.mark.parametrize("path", sorted(ENVIRONMENTS.glob("*.json")), ids=lambda p: p.name)
def test_every_bundled_environment_is_valid(path):
    data = json.loads(path.read_text())
    validate(data["environment"], "environment")
    for f in data.get("findings", []):
        validate(f, "finding")


def test_fleet_report_groups_the_nodes_it_read(capsys, slurm):
    code, body = _run(
        capsys, ["fleet", "lock-check", "--lock", "stack.lock.toml", "--slurm", slurm]
    )
    validate(body, "fleet-lock-check")
    assert code == body["exit_code"] == 1 and body["lock"] == "stack.lock.toml"
    assert body["healthy_nodes"] == ["gpu-a"] and body["unhealthy_nodes"] == ["gpu-b"]
    assert [f["node"] for f in body["failed"]] == ["gpu-c"]


def _commands_with_json():
    import typer

    from fixer.cli.commands import app

    def walk(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, [*path, name])
        if any("--json" in getattr(p, "opts", ()) for p in getattr(cmd, "params", ())):
            yield path

    return sorted(walk(typer.main.get_command(app), []))


def test_every_json_command_has_a_case_and_its_help_names_its_schema_file(capsys):
    import re

    commands = _commands_with_json()
    assert {"-".join(c) for c in commands} <= {
        s for _, s in CASES
    }  # every --json command is covered
    for words in commands:
        assert main([*words, "--help"]) == 0
        named = re.findall(r"fixer/schemas/([\w.-]+\.json)", capsys.readouterr().out)
        assert named == ["-".join(words) + ".json"] and named[0] in DOCS, (words, named)


def test_schemas_ship_in_the_package_and_are_valid_schemas():
    assert {
        "error.json",
        "doctor.json",
        "plan.json",
        "apply.json",
        "verify.json",
        "explain.json",
        "lock.json",
        "rollback.json",
        "environment.json",
        "report.json",
        "debug.json",
        "fleet-doctor.json",
        "fleet-lock-check.json",
    } <= set(DOCS)
    for doc in DOCS.values():
        jsonschema.validators.validator_for(doc).check_schema(doc)
