"""A resumed journal's step runs only as the planner writes it (fixer.applier.stepcheck): stated
over the plans the planner makes for every bundled environment, with pip, uv, apt and conda
(condacolab's `python -c` included), and over generated changes of their commands.

Invariants:
- every step the planner writes is accepted for its own recorded inputs;
- a step whose command was changed in any word (inserted, removed, replaced by a hostile word, an
  installer's code argument rewritten) is refused, unless the change gives back the one command
  of that kind the planner can also write ("no command" for an env-fix or verify step);
- a step whose recorded inputs were changed (another package, another index, another prefix)
  is refused unless its command was rebuilt from them, and then only when they pass the grammar
  the planner's inputs pass."""

from __future__ import annotations

import functools
from typing import Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.applier import stepcheck
from fixer.errors import FixerError
from fixer.model import Intent, PipOptions, PlanOptions, Step
from fixer.pipeline import plan_for
from fixer.planner import installers
from fixer.planner.steps import bundled_environments
from tests.helpers.examples import examples
from tests.helpers.hostile import OPTION_LIKE, PATHS, URLS

Case = Tuple[str, Step, str, str, str]

INTENTS = (
    Intent(),
    Intent(cudnn_from="conda"),
    Intent(cudnn_from="apt"),
    Intent(versions={"torch": "2.5.1"}),
)


#: (environment, intent, installer) of every plan made here: named at collection, planned only
#: when a test asks (each plan once per test process). Planning all 32 at import cost every
#: pytest-xdist worker about 2 s of its collection, whichever tests it then ran.
PLANS = [
    (name, i, installer)
    for name in bundled_environments()
    for i in range(len(INTENTS))
    for installer in ("pip", "uv")
]


@functools.lru_cache(maxsize=None)
def _plan_cases(name: str, intent_index: int, installer: str) -> Tuple[Case, ...]:
    """(where, step, python, installer, prefix) for every step of one plan (none when the
    planner refuses the input)."""
    intent = INTENTS[intent_index]
    try:
        pm = plan_for(environment=name, intent=intent, options=PlanOptions(installer=installer))
    except FixerError:
        return ()
    py = pm.env.python
    prefix = py.prefix if py is not None and py.prefix else ""
    out = []
    for step in pm.plan.steps:
        where = f"{name} {intent.cudnn_from} {installer} {step.kind}"
        out.append((where, step, pm.plan.python, pm.plan.installer, prefix))
        ENVIRON[where] = _environ(py)
    return tuple(out)


def cases() -> List[Case]:
    """Every step of every plan made here."""
    return [c for plan in PLANS for c in _plan_cases(*plan)]


def _environ(py) -> List[str]:
    """The uv and conda the probe found on the described machine (PythonEnv.uv, .conda), as a
    resume on that machine finds them."""
    return [f for f in (py.uv, py.conda) if f] if py is not None else []


ENVIRON: Dict[str, List[str]] = {}


def _foreign(step: Step, python: str, installer: str, prefix: str, where: str = ""):
    return stepcheck.foreign(
        step,
        python=python,
        installer=installer,
        prefix=prefix,
        root=None,
        found=ENVIRON.get(where, []),
    )


def test_the_cases_cover_every_kind_that_runs_a_command():
    kinds = {c[1].kind for c in cases()}
    assert {"pip-install", "pip-uninstall", "apt-update", "apt-install", "apt-hold"} <= kinds
    assert {"conda-install", "env-fix", "verify"} <= kinds
    assert any(c[1].packages == ("condacolab",) and c[1].kind == "conda-install" for c in cases())


@pytest.mark.parametrize(
    "plan", PLANS, ids=[f"{n} {INTENTS[i].cudnn_from} {inst}" for n, i, inst in PLANS]
)
def test_every_step_the_planner_writes_is_accepted(plan):
    for where, step, python, installer, prefix in _plan_cases(*plan):
        assert _foreign(step, python, installer, prefix, where) is None, where


_WORDS = st.one_of(
    st.sampled_from(OPTION_LIKE + PATHS + URLS),
    st.sampled_from(["-c", "import os; os.system('touch /tmp/pwned')", "install", "-y", "uv"]),
    st.text(max_size=12),
)


@st.composite
def _changed(draw, argv: Tuple[str, ...]) -> Tuple[str, ...]:
    words = list(argv)
    how = draw(st.sampled_from(["insert", "remove", "replace"] if words else ["insert"]))
    if how == "insert":
        words.insert(draw(st.integers(0, len(words))), draw(_WORDS))
    else:
        i = draw(st.integers(0, len(words) - 1))
        if how == "remove":
            del words[i]
        else:
            words[i] = draw(_WORDS)
    return tuple(words)


@settings(max_examples=examples(300))
@given(data=st.data())
def test_a_changed_command_is_refused(data):
    where, step, python, installer, prefix = data.draw(st.sampled_from(cases()))
    argv = data.draw(_changed(step.argv))
    if argv == tuple(step.argv):
        return  # a word replaced by itself: nothing changed
    planner = stepcheck.expected_argv(
        step, python=python, installer=installer, prefix=prefix, root=None, found=ENVIRON[where]
    )
    assert not isinstance(planner, str)
    hostile = Step(**{**step.__dict__, "argv": argv})
    why = _foreign(hostile, python, installer, prefix, where)
    if argv in planner:
        assert why is None  # the planner's other form of this step: env-fix or verify's none
        assert step.kind in ("env-fix", "verify") and argv == ()
    else:
        assert why is not None and "\n" not in why, argv


def test_condacolabs_code_argument_is_the_planners_only():
    (case,) = [c for c in cases() if c[1].packages == ("condacolab",)][:1]
    where, step, python, installer, prefix = case
    for code in (
        "import condacolab; condacolab.install(); import os; os.system('id')",
        "import os; os.system('touch /tmp/pwned')",
        "import condacolab;condacolab.install()",
    ):
        hostile = Step(**{**step.__dict__, "argv": (python, "-c", code)})
        assert _foreign(hostile, python, installer, prefix, where) is not None
    other = Step(**{**step.__dict__, "argv": ("/tmp/python", *step.argv[1:])})
    assert _foreign(other, python, installer, prefix, where) is not None


_PIP_FIELDS = st.fixed_dictionaries(
    {
        "index_url": st.one_of(st.none(), st.sampled_from(URLS)),
        "extra_index_urls": st.lists(st.sampled_from(URLS), max_size=2).map(tuple),
    }
)


@settings(max_examples=examples(200))
@given(data=st.data())
def test_rebuilt_from_hostile_inputs_passes_only_the_planners_grammar(data):
    """A journal whose step's inputs and command were both rewritten, consistently: accepted only
    when the inputs are what the planner could have taken (https or local index URLs; PEP 508
    names; Debian names; conda-build specs), never with an option-like package."""
    pips = [c for c in cases() if c[1].kind in ("pip-install", "pip-uninstall")]
    where, step, python, installer, prefix = data.draw(st.sampled_from(pips))
    fields = data.draw(_PIP_FIELDS)
    packages = data.draw(st.lists(st.sampled_from(OPTION_LIKE + ("torch==2.5.1",)), max_size=2))
    opts = PipOptions(**{**(step.pip or PipOptions()).__dict__, **fields})
    try:
        argv = (
            installers.pip_argv(python, packages, opts, installer=installers.pip_tool(installer))
            if step.kind == "pip-install"
            else installers.pip_uninstall(
                python, packages, installer=installers.pip_tool(installer)
            )
        )
    except FixerError:
        return  # the builder itself refuses: no command to forge
    hostile = Step(**{**step.__dict__, "argv": argv, "pip": opts, "packages": tuple(packages)})
    why = _foreign(hostile, python, installer, prefix, where)
    # the planner's index URLs: https with a host (a userinfo is allowed: --index-mirror)
    bad_url = [
        u
        for u in (opts.index_url, *opts.extra_index_urls)
        if u and not (u.startswith("https://") and u[8:] and " " not in u)
    ]
    if why is None:
        assert not bad_url, (opts, argv)
        assert all(p[:1] != "-" for p in packages)
