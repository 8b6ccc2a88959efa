"""A lock file is untrusted data: every field takes hostile values (tests/helpers/hostile.py),
and the answer is a Lock whose every name, version, URL and path is of its grammar, or a
UsageError (exit 2) of one line naming FILE:LINE and the key; never another exception, and
nothing runs or is written while it is read. The CLI refuses such a lock before any step."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import recipebook
from fixer.errors import UsageError
from fixer.lockfile import format as lockformat
from fixer.lockfile.format import dumps, lock_from_dict, read_lock
from fixer.system import grammar
from fixer.system.toml_write import value as toml_value
from tests.helpers.examples import examples
from tests.helpers.hostile import nothing_happens, one_line, values, with_field

SHA = "sha256:" + "ab" * 32

GOOD: Dict[str, Any] = {
    "version": 2,
    "created": "2026-11-26T04:10:00+00:00",
    "tool": "colab-cudnn-fix 0.1.0",
    "cudnn": "9.19.0",
    "cudnn_from": "pip",
    "indexes": ["https://download.pytorch.org/whl/cu130", "https://pypi.org/simple"],
    "machine": {"driver": "580.159.04", "gpus": ["NVIDIA H200"], "python": "3.12.3"},
    "requires": {
        "python": "3.12",
        "cuda": "13.0",
        "compute_capabilities": ["9.0"],
        "arch": "x86_64",
    },
    "package": [
        {
            "name": "nvidia-cudnn-cu13",
            "version": "9.19.0.56",
            "index": "https://pypi.org/simple",
            "hashes": [SHA],
        }
    ],
    "remove": [{"name": "nvidia-cudnn-cu12"}],
    "apt": [{"package": "libcudnn9-cuda-13", "version": "9.19.0.56-1", "hold": True}],
    "env_fix": [
        {"kind": "ld-library-path-drop", "value": "/usr/local/cuda/lib64", "why": "old"},
        {"kind": "ld-so-conf", "value": "/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"},
        {
            "kind": "ipython-preload",
            "value": "/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        },
        {"kind": "env-file", "value": "/etc/profile.d/colab-cudnn-fix.sh"},
    ],
}

#: Every field of the format, as a path into GOOD.
FIELDS: List[Tuple[Any, ...]] = [
    (k,) for k in GOOD if k not in ("package", "remove", "apt", "env_fix", "machine", "requires")
] + [
    ("indexes", 0),
    ("machine", "driver"),
    ("machine", "gpus"),
    ("requires", "python"),
    ("requires", "cuda"),
    ("requires", "compute_capabilities"),
    ("requires", "arch"),
    ("requires", "ptx"),
    ("package",),
    ("package", 0),
    ("package", 0, "name"),
    ("package", 0, "version"),
    ("package", 0, "index"),
    ("package", 0, "hashes"),
    ("package", 0, "hashes", 0),
    ("remove",),
    ("remove", 0, "name"),
    ("apt",),
    ("apt", 0, "package"),
    ("apt", 0, "version"),
    ("apt", 0, "hold"),
    ("apt", 0, "sha256"),
    ("apt", 0, "integrity"),
    ("env_fix", 0, "kind"),
    ("env_fix", 1, "value"),
    ("env_fix", 2, "value"),
    ("env_fix", 3, "value"),
    ("env_fix", 0, "why"),
    ("allow_insecure_index",),
    ("bogus",),
]


@pytest.fixture(scope="module")
def recipes():
    return recipebook.load()


def _sound(lock: lockformat.Lock) -> None:
    """Every value a Lock holds is of its grammar (what reaches pip, apt-get and the files)."""
    for p in lock.packages:
        assert grammar.pip_name(p.name) == p.name
        grammar.pip_version(p.version)
        if p.index:
            assert p.index.startswith(("https://", "file:/", "http://")) and "\n" not in p.index
    for a in lock.apt:
        grammar.apt_name(a.package)
        grammar.apt_version(a.version)
        assert not a.package.startswith("-")
    for name in lock.remove:
        assert name not in lockformat.PROTECTED
    for fx in lock.env_fixes:
        assert fx.value.startswith("/") and ".." not in fx.value.split("/")
        assert not fx.value.startswith("/tmp")


def test_the_good_lock_reads_and_round_trips(recipes, tmp_path):
    lock = lock_from_dict(GOOD, recipes=recipes)
    _sound(lock)
    f = tmp_path / "good.toml"
    f.write_text(dumps(lock))
    assert read_lock(str(f), recipes) == lock


@settings(
    max_examples=examples(600),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(field=st.sampled_from(FIELDS), hostile=values())
def test_a_hostile_field_is_a_one_line_usage_error_and_nothing_runs(recipes, field, hostile):
    data = with_field(GOOD, field, hostile)
    with nothing_happens() as happened:
        try:
            lock = lock_from_dict(data, "hostile.toml", recipes=recipes)
        except UsageError as exc:
            assert exc.exit_code == 2
            assert one_line(str(exc)) and str(exc).startswith("hostile.toml: ")
            assert len(str(exc)) < 600
        else:
            _sound(lock)
    assert happened == []


#: Characters str.splitlines breaks at (a key of a JSON or TOML lock may hold any of them).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@settings(max_examples=examples(60), deadline=None)
@given(
    where=st.sampled_from(["top", "requires", "remove"]),
    key=st.tuples(st.text(max_size=8), st.sampled_from(LINE_BREAKS), st.text(max_size=80)).map(
        "".join
    ),
)
def test_an_unknown_key_of_any_text_is_named_on_one_line(recipes, where, key):
    """The three places that name an unknown key (the top table, a table, a record) show it
    quoted and escaped: found by CI's full run, where a key "\n" under [[remove]] printed a
    two-line error."""
    data = {k: (list(v) if isinstance(v, list) else v) for k, v in GOOD.items()}
    if where == "top":
        data[key] = 1
    elif where == "requires":
        data["requires"] = {**GOOD["requires"], key: "x"}
    else:
        data["remove"] = [{**GOOD["remove"][0], key: "x"}]
    with pytest.raises(UsageError) as exc:
        lock_from_dict(data, "hostile.toml", recipes=recipes)
    assert one_line(str(exc.value)) and str(exc.value).endswith(": unknown key"), str(exc.value)


def _toml(data: Dict[str, Any]) -> str:
    """GOOD as TOML text (the writer's own quoting), so that a key's line can be found."""
    lines = []
    for k, v in data.items():
        if not isinstance(v, (dict, list)) or k == "indexes":
            lines.append(f"{k} = {toml_value(v)}")
    for table in ("machine", "requires"):
        lines.append(f"[{table}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in data[table].items()]
    for kind in ("package", "remove", "apt", "env_fix"):
        for rec in data[kind]:
            lines.append(f"[[{kind}]]")
            lines += [f"{k} = {toml_value(v)}" for k, v in rec.items()]
    return "\n".join(lines) + "\n"


@settings(
    max_examples=examples(200),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    field=st.sampled_from([f for f in FIELDS if len(f) == 3 and isinstance(f[1], int)]),
    hostile=st.sampled_from(
        ["-oDPkg::Pre-Invoke::=touch /tmp/x", "9" * 5000, "a\nb", "../../x", "/tmp", "http://e/s"]
    ),
)
def test_a_file_error_names_the_file_and_the_line_of_the_key(recipes, tmp_path, field, hostile):
    data = with_field(GOOD, field, hostile)
    text = _toml(data)
    f = tmp_path / "l.toml"
    f.write_text(text)
    try:
        read_lock(str(f), recipes)
    except UsageError as exc:
        m = re.match(rf"{re.escape(str(f))}:(\d+): ", str(exc))
        assert m, str(exc)
        line = text.splitlines()[int(m.group(1)) - 1]
        assert line.startswith((f"{field[2]} =", f"[[{field[0]}]]")), (line, str(exc))


@pytest.mark.parametrize(
    "path, value, words",
    [
        (("apt", 0, "package"), "-oDPkg::Pre-Invoke::=touch /tmp/pwned", "Debian Policy 5.6.1"),
        (("apt", 0, "version"), "1;rm", "Debian Policy 5.6.12"),
        (("package", 0, "name"), "torch\n--index-url http://evil", "PEP 508"),
        (("package", 0, "version"), "9" * 5000, "longer than"),
        (("package", 0, "index"), 5, "string"),
        (("package", 0, "index"), "http://evil.example/simple", "plain http"),
        (("indexes", 0), "http://evil.example/simple", "plain http"),
        (("env_fix", 3, "value"), "/etc/profile.d/../../tmp/x.sh", "env-file"),
        (("env_fix", 1, "value"), "/tmp", "never points"),
        (("env_fix", 1, "value"), "/usr/lib/x86_64-linux-gnu/../../../tmp/lib", "normal form"),
        (("remove", 0, "name"), "pip", "not a distribution the recipes know"),
        (("remove", 0, "name"), "setuptools", "not a distribution the recipes know"),
        (("remove", 0, "name"), "colab-cudnn-fix", "not a distribution the recipes know"),
    ],
)
def test_the_attacks_of_issue_21_are_refused(recipes, path, value, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        lock_from_dict(with_field(GOOD, path, value), recipes=recipes)


def test_an_explicitly_allowed_http_index_reads_with_a_warning(recipes):
    from fixer.system import plugins

    plugins.clear()
    data = with_field(GOOD, ("indexes", 0), "http://user:pw@mirror.example/simple")
    data["allow_insecure_index"] = True
    lock = lock_from_dict(data, recipes=recipes)
    assert lock.indexes[0].startswith("http://")
    warned = [w for w in plugins.problems() if "plain-http" in w]
    assert warned and "pw" not in warned[0] and "***@mirror.example" in warned[0]
    plugins.clear()


def test_http_to_this_machine_is_secure_as_pip_says(recipes):
    data = with_field(GOOD, ("package", 0, "index"), "http://127.0.0.1:8080/simple")
    assert lock_from_dict(data, recipes=recipes).packages[0].index == "http://127.0.0.1:8080/simple"


def test_apply_refuses_a_hostile_lock_before_any_step(tmp_path, capsys):
    from fixer.cli import main

    data = with_field(GOOD, ("apt", 0, "package"), "-oDPkg::Pre-Invoke::=touch /tmp/pwned")
    f = tmp_path / "hostile.toml"
    f.write_text(_toml(data))
    with nothing_happens() as happened:
        code = main(
            ["apply", "--lock", str(f), "--environment", "h200-healthy", "--dry-run", "--json"]
        )
    assert code == 2
    err = capsys.readouterr()
    assert "Traceback" not in err.err + err.out
    assert "Debian Policy 5.6.1" in err.err + err.out
    assert [e for e in happened if e[0] != "open"] == []
