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
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs.values()), docs


REGISTRY, DOCS = _registry()


def validate(body, name):
    schema = DOCS[name + ".json"]
    jsonschema.validators.validator_for(schema)(schema, registry=REGISTRY).validate(body)


def _run(capsys, argv):
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    body = json.loads(out)          # exactly one JSON object, nothing else on stdout
    assert isinstance(body, dict) and body["schema"] >= 1, body
    return code, body


CASES = [
    (["doctor", "--environment", "colab-2025-01-tf215"], "doctor"),
    (["doctor", "--environment", "no-such-env"], "doctor"),                 # error
    (["doctor", "--no-such-option"], "doctor"),                             # usage error
    (["plan", "--environment", "colab-2025-01-tf215"], "plan"),
    (["plan", "--environment", "colab-2026-08", "--torch", "9.9"], "plan"),
    (["plan", "--installer", "npm"], "plan"),
    (["apply", "--dry-run", "--environment", "colab-2025-01-tf215"], "apply"),
    (["apply", "--environment", "colab-2026-08"], "apply"),                 # nothing to do
    (["apply", "--environment", "colab-2026-08-cpu"], "apply"),             # no GPU
    (["apply", "--find-links", "/nonexistent"], "apply"),
    (["verify", "--python", "/bin/ls"], "verify"),
    (["explain", "--no-detect", "libcudnn_cnn_infer.so.8: cannot open shared object file"], "explain"),
    (["explain", "--no-detect", "--file", "/nonexistent"], "explain"),
    (["lock", "--environment", "colab-2026-08", "--find-links", "/nonexistent"], "lock"),
    (["rollback", "--root", "/nonexistent"], "rollback"),
    (["recipes", "list"], "recipes-list"),
    (["recipes", "show", "cudnn"], "recipes-show"),
    (["recipes", "show", "nothing"], "recipes-show"),
    (["recipes", "validate"], "recipes-validate"),
]


@pytest.mark.parametrize("argv,schema", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_every_command_output_is_one_object_valid_against_its_schema(argv, schema, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    code, body = _run(capsys, argv)
    validate(body, schema)
    assert body["command"] == schema.replace("-", " ")
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
    for argv in (["apply", "--dry-run", "--environment", "colab-2025-01-tf215"],
                 # another machine's plan only with --dry-run (issue 10): apply never runs it here
                 ["apply", "--dry-run", "--environment", "colab-2026-08"],
                 ["apply", "--dry-run", "--environment", "colab-2026-08-cpu"]):
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


def test_schemas_ship_in_the_package_and_are_valid_schemas():
    assert {"error.json", "doctor.json", "plan.json", "apply.json", "verify.json", "explain.json", "lock.json",
            "rollback.json", "environment.json"} <= set(DOCS)
    for doc in DOCS.values():
        jsonschema.validators.validator_for(doc).check_schema(doc)
