"""An `--environment FILE` (doctor --json output) is untrusted data: every field and every list
item of every bundled environment takes hostile values (tests/helpers/hostile.py, plus strings
that would create a marker file if anything ran them), any field or item is removed (a required
key missing), and unknown keys and items are added (hostile.mutations); `plan --environment F --json` and
`doctor --environment F --json` answer with valid JSON, exit 0, 1 or 3, or exit 2 with one line
that names the field's path ($.environment.gpus[0].index); never a traceback, nothing runs or
is written, and the marker never appears."""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.cli import main
from fixer.system import paths
from fixer.planner.steps import bundled_environments, environments_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import (
    EVERY_ITEM,
    Mutation,
    field_paths,
    mutations,
    nothing_happens,
    one_line,
    values,
    with_field,
)

Path = Tuple[Any, ...]

#: Where a hostile value that ran would leave its mark (outside every test's tmp_path).
MARKER = os.path.join(tempfile.gettempdir(), f"fixer-hostile-env-{os.getpid()}")
RUNS = (
    f"-oDPkg::Pre-Invoke::=touch {MARKER}",
    f"$(touch {MARKER})",
    f"`touch {MARKER}`",
    f"x; touch {MARKER}",
    f"x\ntouch {MARKER}",
    f"--python=/bin/sh -c 'touch {MARKER}'",
)


def _load(name: str) -> Dict[str, Any]:
    with open(os.path.join(environments_dir(), name + ".json"), encoding="utf-8") as fh:
        data: Dict[str, Any] = json.load(fh)
    return data


ENVIRONMENTS = {name: _load(name) for name in bundled_environments()}
#: (environment name, field path) for every field and list item of every bundled environment.
FIELDS: List[Tuple[str, Path]] = sorted(
    {(name, p) for name, data in ENVIRONMENTS.items() for p in field_paths(data, EVERY_ITEM)},
    key=repr,
)
#: A change of one bundled environment: a hostile value set, a field or item removed, an unknown
#: key or item added.
CHANGES = st.one_of(
    *[mutations(data, st.one_of(values(), st.sampled_from(RUNS))) for data in ENVIRONMENTS.values()]
)


def _dollar(path: Path) -> str:
    """The path as the loader names it: ("environment", "gpus", 0, "index") ->
    $.environment.gpus[0].index."""
    text = "$"
    for p in path:
        text += f"[{p}]" if isinstance(p, int) else f".{p}"
    return text


def _named(message: str, path: Path) -> bool:
    """The message names the replaced field, one of the fields under it (a hostile object's
    own keys), or the object that holds it (a key it does not know, a key now missing)."""
    for n in range(len(path), 0, -1):
        if _dollar(path[:n]) in message:
            return True
    # a top-level key: its holder is the document ("$"), named with the key it lacks
    return (
        len(path) == 1 and message.split(": ", 1)[-1].startswith("$") and f'"{path[0]}"' in message
    )


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """The recipe cache is written on the first plan (the user's cache directory, by design);
    written before the watch, so that what the watch sees is only what the input caused."""
    main(["plan", "--environment", "h200-healthy", "--json"])


#: A cache file's write (fixer.system.paths.write_cache): its private directory, then a
#: temporary file and a rename relative to that directory's descriptor.
_CACHE_WRITE = re.compile(r"^\(?'\.?[0-9a-f]{16,}\.json[.0-9a-f]*(tmp)?'")


def _not_cache(happened: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """What happened, less the writes of the tool's own cache (the user's cache directory)."""
    cache = str(paths.cache_dir())
    return [
        (event, args)
        for event, args in happened
        if cache not in args
        and not (event in ("open", "os.rename") and _CACHE_WRITE.match(args))
        and not (event == "os.chmod" and re.match(r"\(\d+,", args))  # its fchmod 0600
    ]


def _answer(out: str) -> Dict[str, Any]:
    body: Dict[str, Any] = json.loads(out)
    return body


@settings(
    max_examples=examples(600),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(change=CHANGES)
def test_a_hostile_field_is_one_line_naming_it_or_a_normal_answer(capsys, tmp_path, change):
    _check(capsys, tmp_path, change)


def _check(capsys: Any, tmp_path: Any, change: Mutation) -> None:
    path = change.path
    f = tmp_path / "hostile.json"
    f.write_text(json.dumps(change.doc))
    for command in ("plan", "doctor"):
        capsys.readouterr()
        with nothing_happens() as happened:
            code = main([command, "--environment", str(f), "--json"])
        out = capsys.readouterr()
        assert "Traceback" not in out.out + out.err, (command, str(change), out.err[-2000:])
        assert _not_cache(happened) == [], _not_cache(happened)
        assert not os.path.exists(MARKER)
        body = _answer(out.out)
        assert body.get("exit_code", code) == code
        if code == 2:
            message = body["error"]["message"]
            assert one_line(message) and message.startswith(f"--environment {f}: "), message
            assert _named(message, path), (str(change), message)
            assert len(message) < 600 + len(str(f)), message
        else:
            # README "Exit codes": 0 healthy, 1 problems found, 3 no GPU detected
            assert code in (0, 1, 3), (command, str(change), code, out.err[-2000:])


def test_the_generator_reaches_every_item_of_every_list():
    """Not only the first item: the last distribution of each environment is a field too."""
    for name, data in ENVIRONMENTS.items():
        dists = data["environment"]["python"]["distributions"]
        assert (name, ("environment", "python", "distributions", len(dists) - 1, "name")) in FIELDS


@pytest.mark.parametrize(
    "path, value, words",
    [
        # each reached pip's requirements or the loader's search lists before the loader knew it
        (("environment", "frameworks", 0, "distribution"), "-oDPkg::Pre-Invoke::=x", "PEP 508"),
        (
            ("environment", "python", "distributions", 0, "named_version"),
            "--index-url=http://evil.example/simple",
            "a version",
        ),
        (("environment", "libraries", 0, "directory"), "relative/lib", "absolute directory"),
        (("environment", "libraries", 0, "directory"), "/usr/lib\n/tmp", "absolute directory"),
        (("schema",), [10**300] * 3, "not a schema"),
    ],
)
def test_the_fields_that_reached_the_planner_are_refused_where_read(
    capsys, tmp_path, path, value, words
):
    f = tmp_path / "e.json"
    f.write_text(json.dumps(with_field(ENVIRONMENTS["h200-healthy"], path, value)))
    code = main(["plan", "--environment", str(f), "--json"])
    message = _answer(capsys.readouterr().out)["error"]["message"]
    assert code == 2 and words in message and _named(message, path), message
    assert one_line(message) and len(message) < 300 + len(str(f))
