"""API functions take typed values (fixer.Intent, fixer.PlanOptions) or their keywords, never both,
and both give the same answer as the CLI (which builds the typed values). apply's option
contracts: --environment never changes a machine, --root is a sandbox; the dry run
names the refusal that apply raises, from one decision (fixer.pipeline.apply_refusal)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fixer
import fixer.api
import fixer.cli
from fixer.model import Intent, PlanOptions
from fixer.planner.steps import bundled_environments
from tests.helpers.cli import cli_json
from tests.helpers.examples import examples

ENVIRONMENTS = sorted(bundled_environments())

KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "framework": st.lists(st.sampled_from(["torch", "jax", "tensorflow"]), unique=True),
        "cudnn_from": st.sampled_from(["pip", "apt"]),
        "cuda": st.sampled_from(["12.6", "13.0"]),
        "keep": st.lists(st.sampled_from(["torch", "jax"]), unique=True),
        "installer": st.sampled_from(["auto", "pip", "uv"]),
        "no_index": st.booleans(),
    },
)


def _argv(keywords):
    argv = []
    for key, value in keywords.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif isinstance(value, list):
            for v in value:
                argv += [flag, v]
        else:
            argv += [flag, value]
    return argv


def _outcome(call):
    try:
        return call().to_dict()
    except fixer.FixerError as exc:
        return (type(exc).__name__, exc.message)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(environment=st.sampled_from(ENVIRONMENTS), keywords=KEYWORDS)
def test_typed_values_and_keywords_plan_alike_and_as_the_cli(environment, keywords, capsys):
    intent = fixer.api.make_intent(
        keywords.get("framework"),
        cuda=keywords.get("cuda"),
        cudnn_from=keywords.get("cudnn_from"),
        keep=keywords.get("keep"),
    )
    options = PlanOptions(
        installer=keywords.get("installer", "auto"), no_index=keywords.get("no_index", False)
    )
    by_keywords = _outcome(lambda: fixer.plan(environment=environment, **keywords))
    typed = _outcome(lambda: fixer.plan(intent, options, environment=environment))
    assert typed == by_keywords
    if isinstance(typed, dict):
        code, payload = cli_json(capsys, "plan", "--environment", environment, *_argv(keywords))
        assert payload == typed


def test_a_typed_value_and_its_keywords_together_are_refused():
    with pytest.raises(TypeError, match="intent= or its keywords"):
        fixer.plan(Intent(frameworks=("torch",)), environment=ENVIRONMENTS[0], torch="2.5.1")
    with pytest.raises(TypeError, match="options= or its keywords"):
        fixer.plan(options=PlanOptions(), environment=ENVIRONMENTS[0], installer="pip")
    with pytest.raises(TypeError, match="unexpected keyword argument 'torhc'"):
        fixer.plan(environment=ENVIRONMENTS[0], torhc="2.5.1")


def test_a_typed_value_gets_the_keywords_checks():
    with pytest.raises(fixer.UsageError, match="--installer"):
        fixer.plan(options=PlanOptions(installer="poetry"), environment=ENVIRONMENTS[0])  # type: ignore[arg-type]
    with pytest.raises(fixer.UsageError, match="not a version"):
        fixer.plan(Intent(versions={"torch": "two"}), environment=ENVIRONMENTS[0])


def test_the_lock_default_has_one_home():
    import inspect

    from fixer.cli.table import OPTIONS

    assert OPTIONS["output"].default == fixer.api.DEFAULT_LOCK_FILE
    assert inspect.signature(fixer.lock).parameters["output"].default == fixer.api.DEFAULT_LOCK_FILE


# -- option contracts ---------------------------------------------------------------


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_apply_environment_needs_dry_run_whatever_root_says(environment, tmp_path, capsys):
    for root in (None, str(tmp_path)):
        with pytest.raises(fixer.UsageError, match="add --dry-run"):
            fixer.apply(environment=environment, root=root)
        argv = ["apply", "--environment", environment] + (["--root", root] if root else [])
        assert fixer.cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "add --dry-run" in err


def test_verify_and_doctor_deep_refuse_a_described_machine(capsys):
    with pytest.raises(fixer.UsageError, match="verify runs the frameworks"):
        fixer.verify(environment=ENVIRONMENTS[0])
    with pytest.raises(fixer.UsageError, match="doctor --deep runs the frameworks"):
        fixer.doctor(environment=ENVIRONMENTS[0], deep=True)
    for argv in (["verify"], ["doctor", "--deep"]):
        assert fixer.cli.main([*argv, "--environment", ENVIRONMENTS[0]]) == 2
        assert capsys.readouterr().err.count("\n") == 1


@settings(max_examples=examples(40), deadline=None)
@given(
    environment=st.sampled_from(ENVIRONMENTS),
    keywords=KEYWORDS,
    sandboxed=st.booleans(),
    prepare=st.booleans(),
)
def test_the_dry_run_names_the_rule_s_refusal(
    environment, keywords, sandboxed, prepare, tmp_path_factory
):
    """The refusal the dry run carries is the rule, stated here from the plan alone: with --root,
    any apt or conda step, else an interpreter outside the sandbox (every bundled environment's
    lies outside a fresh temporary folder); then a plan that is not a fix (manual findings
    other than a missing GPU being prepared for, or drift)."""
    root = str(tmp_path_factory.mktemp("root")) if sandboxed else None
    try:
        result = fixer.apply(
            environment=environment, dry_run=True, root=root, prepare_for_gpu=prepare, **keywords
        )
    except fixer.FixerError:  # no stack fits: nothing to compare
        return
    if result.outcome not in ("dry-run", "nothing-to-do"):
        assert result.refusal is None
        return
    plan = result.plan
    kinds = {s.kind for s in plan.steps}
    system = kinds & {"apt-update", "apt-install", "apt-hold", "conda-install"}
    manual = [f for f in plan.manual if not (prepare and f.id == "gpu-missing")]
    if root and system:
        assert isinstance(result.refusal, fixer.UsageError)
        assert all(k in result.refusal.message for k in system)
    elif root:
        assert type(result.refusal).__name__ == "PathRefused"
        assert "is outside the sandbox" in result.refusal.message
    elif manual or plan.drift:
        assert type(result.refusal).__name__ == "NotAFix"
    else:
        assert result.refusal is None
    payload = result.to_dict()
    assert (payload["refusal"] is None) == (result.refusal is None)
