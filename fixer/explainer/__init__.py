"""explain: turn an error text that a user pastes into ranked causes (findings), with how sure.

The catalogue (recipes/errors.toml, fixer.explainer.catalogue) is built from the code that prints
each message: torch, TensorFlow/XLA, JAX, PaddlePaddle, ONNX Runtime and CTranslate2 checks,
cuDNN status names, CUDA runtime/driver error names and glibc's loader wording; every rule cites
its source. Loader errors are read structurally (fixer.explainer.loader): the library's family
decides the finding, with no rule per library name. Ambiguous messages come with ranked
alternatives, each with the check that decides; with a detected Environment the machine decides.
Benign lines are said to be benign. Long logs are read head and tail (fixer.explainer.logtext).
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from fixer.errors import UsageError
from fixer.model import Environment, Finding, Recipes
from fixer.rules import decode_cudnn_version
from fixer.explainer.catalogue import (
    FACTS,
    RULES_FILE,
    SCHEMA_VERSION,
    Alternative,
    Catalogue,
    Family,
    LoaderRule,
    Rule,
    load_catalogue,
    load_rules,
    parse_catalogue,
    parse_rules,
    rules_files,
)
from fixer.explainer.engine import Explanation, analyze_text, diagnose_all, view_findings
from fixer.explainer.loader import Library, LoadFailure, find_failures, parse_library
from fixer.explainer.similar import Model as SimilarModel

__all__ = [
    "FACTS",
    "RULES_FILE",
    "SCHEMA_VERSION",
    "Alternative",
    "Catalogue",
    "Explanation",
    "Family",
    "Library",
    "LoadFailure",
    "LoaderRule",
    "Rule",
    "analyze",
    "diagnose_all",
    "explain",
    "find_failures",
    "load_catalogue",
    "load_rules",
    "normalize_version",
    "parse_catalogue",
    "parse_library",
    "parse_rules",
    "rules_files",
    "view_findings",
]


def normalize_version(text: str) -> Optional[str]:
    """ "(9, 19, 0)" / "9.19.0" / "91900" / "7102" / "8906" -> "9.19.0" / ... (fixer.rules decodes)."""
    return decode_cudnn_version(text)


def analyze(
    text: str,
    env: Optional[Environment] = None,
    recipes: Optional[Recipes] = None,
    *,
    rules: Optional[Sequence[Rule]] = None,
    extra_dirs: Sequence[str] = (),
    notes: Sequence[str] = (),
    similar: Union[bool, SimilarModel] = True,
) -> Explanation:
    """explain(), with whether the text was recognised, the checks that decide, and notes.
    `similar=False` leaves out the guess by similarity (explainer.similar) for a text nothing
    else reads: only the readings of messages and of a finding's words; a similar.Model makes
    the guess with that model instead of the shipped one (cross-validation builds one per fold)."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(
            "explain needs an error text: pass it as an argument, with --file FILE, or on stdin with -"
        )
    cat = load_catalogue(extra_dirs)
    return analyze_text(text, cat, env, recipes, rules=rules, notes=notes, similar=similar)


def explain(
    text: str, env: Optional[Environment] = None, recipes: Optional[Recipes] = None
) -> Tuple[Finding, ...]:
    """Ranked findings (most likely cause first, each with a confidence in 0..1) for an error
    text; with an Environment, combined with what is on the machine."""
    return analyze(text, env, recipes).findings
