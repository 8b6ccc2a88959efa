"""The verdict of fixer.apply() about the process it ran in, and the `nothing_to_do` invariant, over
generated inputs (Hypothesis): what the in-process loader fix did (fixer.planner.preload.ProcessFix), what
the process maps, and whether a step changed the machine.

Invariants (fixer.api.ApplyResult, fixer.applier.kernel.process_verdict):
- "fixed in this kernel" only when every library the fix loaded or found is mapped and no other copy
  of an intended soname is (no conflict, no failure, no stray);
- `nothing_to_do` is true only when no step changed the machine, the in-process fix loaded nothing and
  changed no variable, and no restart is needed; then there is no verdict at all (`restart` null);
  in particular an in-process fix alone is never "nothing to do";
- a needed restart always comes with exactly what to do;
- every payload is valid against fixer/schemas/apply.json (which states the same rules).
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.planner.preload import ProcessFix, soname_key, stray_copies
from fixer.api import ApplyResult
from fixer.applier.kernel import FIXED_FOR_NEW, FIXED_IN_KERNEL, process_verdict
from fixer.applier.results import ApplyResult as Applied
from fixer.model import Plan, Step
from tests.helpers.examples import examples
from tests.helpers.kernels import validate_apply

GOOD, BAD = "/nonexistent/pip/nvidia/cudnn/lib", "/nonexistent/usr/lib/x86_64-linux-gnu"
NAMES = (
    "libcudnn.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_graph.so.9",
    "libcudnn_ops.so.8",
)
#: a pid that is not this process: the verdict is judged on the generated maps only (recheck reads
#: the real maps of the process it was made in; the real-kernel test covers that)
OTHER_PID = os.getpid() + 100000


def _mapped_file(directory: str, name: str, deleted: bool) -> str:
    real = f"{directory}/{name}.14.0" if directory == BAD else f"{directory}/{name}"
    return real + (" (deleted)" if deleted else "")


@st.composite
def process_states(draw):
    family = [
        f"{GOOD}/{n}" for n in draw(st.lists(st.sampled_from(NAMES), min_size=1, unique=True))
    ]
    loaded = draw(st.lists(st.sampled_from(family), unique=True))
    already = [p for p in family if p not in loaded and draw(st.booleans())]
    conflicts = [
        (p, _mapped_file(BAD, os.path.basename(p), False))
        for p in family
        if p not in loaded and p not in already and draw(st.booleans())
    ]
    failed = [
        (p, "cannot open")
        for p in family
        if p not in loaded and p not in already and p not in dict(conflicts) and draw(st.booleans())
    ]
    environ = draw(
        st.sampled_from([(), (("LD_LIBRARY_PATH", None),), (("LD_LIBRARY_PATH", GOOD),)])
    )
    fix = ProcessFix(
        loaded=tuple(loaded),
        already=tuple(already),
        conflicts=tuple(conflicts),
        failed=tuple(failed),
        environ=environ,
    )
    # what the process maps: usually what the fix loaded, sometimes not; plus other copies
    mapped = [p for p in loaded + already if draw(st.integers(0, 9)) > 0]
    mapped += [b for _, b in conflicts]
    mapped += [
        _mapped_file(d, n, draw(st.booleans()))
        for d, n in draw(
            st.lists(st.tuples(st.sampled_from([GOOD, BAD]), st.sampled_from(NAMES)), max_size=3)
        )
    ]
    return fix, family, mapped


@settings(max_examples=examples(300), deadline=None)
@given(state=process_states(), kernel=st.booleans())
def test_fixed_in_this_kernel_only_when_the_maps_hold_only_the_intended_copies(state, kernel):
    fix, family, mapped = state
    v = process_verdict(fix, family, mapped, pid=OTHER_PID, kernel=kernel)
    holds = (
        not fix.conflicts
        and not fix.failed
        and all(p in mapped for p in fix.loaded + fix.already)
        and not stray_copies(family, mapped)
    )
    assert (v.verdict == FIXED_IN_KERNEL) == holds
    if v.verdict == FIXED_FOR_NEW:
        assert v.restart_needed and v.todo
        assert v.todo.startswith("restart the runtime" if kernel else "start this Python process")
    else:
        assert not v.restart_needed and v.todo is None and "no restart needed" in v.message


def test_a_stray_is_another_file_with_the_same_soname():
    assert (
        soname_key("/x/libcudnn_ops.so.9.14.0")
        == soname_key("/y/libcudnn_ops.so.9")
        == ("libcudnn_ops", "9")
    )
    assert soname_key("/x/libcudnn_ops.so.8") != soname_key("/x/libcudnn_ops.so.9")
    assert stray_copies(
        [f"{GOOD}/libcudnn_ops.so.9"], [f"{BAD}/libcudnn_ops.so.9.14.0", f"{BAD}/libcudnn_ops.so.8"]
    ) == [(f"{GOOD}/libcudnn_ops.so.9", f"{BAD}/libcudnn_ops.so.9.14.0")]
    # the old file an install replaced stays mapped as "(deleted)": another copy too
    assert stray_copies([f"{GOOD}/libcudnn.so.9"], [f"{GOOD}/libcudnn.so.9 (deleted)"])


PLAN = Plan(steps=(Step(kind="env-fix", summary="drop a folder from LD_LIBRARY_PATH"),))


@settings(max_examples=examples(300), deadline=None)
@given(
    state=process_states(),
    kernel=st.booleans(),
    changed=st.booleans(),
    wanted=st.booleans(),
    outcome=st.sampled_from(["applied", "nothing-to-do", "restart-needed"]),
)
def test_nothing_to_do_never_stands_next_to_a_verdict(state, kernel, changed, wanted, outcome):
    fix, family, mapped = state
    v = process_verdict(fix, family, mapped, pid=OTHER_PID, kernel=kernel)
    if outcome != "applied":
        changed = False
        fix = ProcessFix()  # the machine needed nothing: the process was only checked
        v = process_verdict(fix, family, mapped, pid=OTHER_PID, kernel=kernel)
        outcome = "restart-needed" if v.restart_needed else "nothing-to-do"
    r = ApplyResult(
        outcome=outcome,
        plan=PLAN if outcome == "applied" else Plan(),
        applied=Applied(changed=changed) if outcome == "applied" else None,
        process=v,
        restart_wanted=wanted,
    )
    body = r.to_dict()
    validate_apply(body)
    acted = bool(fix.loaded or fix.environ)
    assert body["nothing_to_do"] == (not changed and not acted and not v.restart_needed)
    if body["nothing_to_do"]:
        assert body["restart"] is None and r.verdict is None
    else:
        info = body["restart"]
        assert info["verdict"] == v.verdict and info["this_process"] is True
        assert info["needed"] == v.restart_needed
        assert info["do"] == (v.restart_needed and wanted and kernel)
        if info["needed"] and not info["do"]:
            assert info["todo"] and info["todo"] in info["message"]
    if acted:  # the in-process fix alone is never "nothing to do"
        assert not body["nothing_to_do"]
    if v.verdict == FIXED_IN_KERNEL and body["restart"] is not None:
        assert body["restart"]["needed"] is False and body["restart"]["todo"] is None


@settings(max_examples=examples(50), deadline=None)
@given(changed=st.booleans(), kernel_loaded=st.booleans(), wanted=st.booleans())
def test_the_cli_verdict_follows_the_same_rule(changed, kernel_loaded, wanted):
    """apply as a child (the CLI): no process verdict; a machine left unchanged is nothing to do and
    carries no "fixed for new processes"."""
    from fixer.api import restart_decision
    from fixer.applier.colab import KernelInfo

    kernel = KernelInfo(
        pid=1234,
        cmdline="ipykernel_launcher",
        loaded=("/x/libcudnn.so.9",) if kernel_loaded else (),
    )
    r = ApplyResult(
        outcome="applied",
        plan=PLAN,
        applied=Applied(changed=changed),
        _restart=restart_decision(kernel, PLAN, wanted),
    )
    body = r.to_dict()
    validate_apply(body)
    assert body["nothing_to_do"] == (not changed)
    assert (body["restart"] is None) == (not changed)
    if changed:
        assert (
            body["restart"]["verdict"] == FIXED_FOR_NEW and body["restart"]["this_process"] is False
        )
        assert body["restart"]["needed"] == kernel_loaded
