"""resolve(Environment, Intent, Recipes) -> Stack: run the solver over the provider, turn the
assignment into a Stack (choices, pins, apt/conda packages, loader fixes), and a failure into
NoStack carrying the clashes and the nearest ways out as data (model.Clash, model.WayOut);
fixer.render.conflicts says them in words.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

from fixer.system.versions import split_requirement, version_key
from fixer.model import (
    Build,
    Choice,
    Clash,
    CudnnChoice,
    Environment,
    Intent,
    Need,
    Package,
    Pin,
    Recipes,
    Refusal,
    Stack,
    WayOut,
)
from fixer.rules import cudnn_pin, display_name, minor_version_note
from fixer.resolver.loader_fixes import env_fixes
from fixer.resolver.provider import (
    DRIVER,
    GPU,
    BadIntent,
    BuildCandidate,
    CudnnCandidate,
    Fact,
    Ident,
    PackageCandidate,
    Req,
    StackProvider,
    _label_version,
    _local_label,
    framework_id,
)
from fixer.resolver.solver import BaseReporter, Conflict, NoSolution, Result, Solver


def resolve(
    env: Environment,
    intent: Intent,
    recipes: Recipes,
    *,
    reporter: Optional[BaseReporter[Ident]] = None,
) -> Stack:
    """The stack this machine should run: the frameworks installed (plus those asked for),
    each on a build that fits the driver, the GPU and Python, sharing one cuDNN per major,
    changing as little as possible. Raises NoStack with the clashes and the nearest ways out
    as data, BadIntent for an intent the recipes cannot mean (fixer.pipeline.resolve raises
    them as Unsatisfiable, exit 1, and UsageError, exit 2)."""
    provider = StackProvider(env, intent, recipes)
    roots = provider.roots()
    try:
        result = Solver(provider, reporter).resolve(roots)
    except NoSolution as exc:
        raise _no_stack(env, intent, recipes, provider, exc.conflicts) from None
    return _to_stack(env, intent, recipes, provider, result)


class _Pins:
    """The pins a stack collects, each with the action pip (or apt) takes from what is installed."""

    def __init__(self, recipes: Recipes, installed: Dict[str, str]) -> None:
        self.recipes = recipes
        self.installed = installed
        self.pins: List[Pin] = []
        self.names: Dict[str, str] = {}

    def add(
        self,
        name: str,
        version: str,
        why: str,
        index_url: Optional[str] = None,
        size: Optional[int] = None,
        force: bool = False,
    ) -> None:
        if size is None:
            size = self.recipes.download_size(name, version)
        have = self.installed.get(name)
        if have is None:
            action = "install"
        elif have == version and not force:
            action = "keep"
        elif have == version:
            action = "install"  # same version again: a reinstall of files that are missing
        else:
            action = (
                "upgrade"
                if version_key(version) > version_key(have)
                or (version_key(version) == version_key(have) and version != have)
                else "downgrade"
            )
        self.pins.append(
            Pin(
                name=name,
                version=version,
                index_url=index_url,
                action=action,  # type: ignore[arg-type]
                installed=have,
                why=why,
                size_bytes=size,
            )
        )
        self.names[name] = version


def _to_stack(
    env: Environment,
    intent: Intent,
    recipes: Recipes,
    provider: StackProvider,
    result: Result[Ident],
) -> Stack:
    m = result.mapping
    pins = _Pins(recipes, provider._installed_dists)
    notes: List[str] = list(provider.notes)
    choices, changed_builds = _framework_choices(env, recipes, provider, result, pins, notes)
    cudnn = _cudnn_choices(env, provider, result, pins, notes, changed_builds)
    _removals(result, pins)
    fixes = env_fixes(env, provider, m)
    for fx in fixes:
        notes.append(fx.why)
    if not result.complete:
        notes.append(
            "the search hit its node budget: this stack fits but may not be the smallest change"
        )
    main = cudnn.main
    return Stack(
        choices=tuple(choices),
        pins=tuple(pins.pins),
        cudnn=(".".join(str(x) for x in version_key(main.version)[:3]) if main else None),
        cudnn_from=(main.source if main else None),
        env_fixes=tuple(fixes),
        apt=cudnn.apt,
        conda=cudnn.conda,
        cudnn_runtime=cudnn.runtime,
        cudnn_copies=cudnn.copies,
        notes=tuple(dict.fromkeys(notes)),
    )


def _framework_choices(
    env: Environment,
    recipes: Recipes,
    provider: StackProvider,
    result: Result[Ident],
    pins: _Pins,
    notes: List[str],
) -> Tuple[List[Choice], List[Build]]:
    """One Choice per framework, with the pins of its build (and its companions)."""
    choices: List[Choice] = []
    changed_builds: List[Build] = []
    for f in provider.frameworks:
        c: BuildCandidate = result.mapping[framework_id(f)]
        if c.installed:
            fb = env.framework(f)
            choices.append(Choice(f, c.build, "keep", reason="installed and fits this machine"))
            if fb is not None:
                # the dist-info version: torch/version.py may add a local tag pip never saw
                pins.add(
                    fb.distribution,
                    c.installed_version or fb.version,
                    f"{display_name(f)} as installed",
                )
            continue
        choices.append(_changed_choice(env, recipes, provider, result, f, c, pins, notes))
        changed_builds.append(c.build)
    return choices, changed_builds


def _changed_choice(
    env: Environment,
    recipes: Recipes,
    provider: StackProvider,
    result: Result[Ident],
    f: str,
    c: BuildCandidate,
    pins: _Pins,
    notes: List[str],
) -> Choice:
    b = c.build
    action = "change" if c.installed_version else "install"
    reason = _why_change(provider, f, c, result)
    mvc = ""
    if (
        b.cuda
        and provider.fit(b) == "minor-version"
        and env.driver.version
        and provider.driver_cuda
    ):
        mvc = minor_version_note(
            f"{display_name(f)} {_label_version(b)}",
            b.cuda,
            env.driver.version,
            provider.driver_cuda,
            recipes.driver_floors,
        )
        notes.append(mvc)
    for i, req in enumerate(b.packages):
        name, ver = split_requirement(req)
        if ver:
            # an extra of the same version (tensorflow -> tensorflow[and-cuda]) is still an
            # install: pip then adds what the extra brings
            pins.add(
                name,
                ver,
                reason if i == 0 else f"part of {display_name(f)} {b.version}",
                index_url=b.index_url,
                size=b.size_bytes if i == 0 else None,
                force="[" in req,
            )
    _companion_pins(provider, f, b, pins, notes)
    if c.installed_version:
        notes.append(f"{display_name(f)} {c.installed_version} -> {_label_version(b)}: {reason}")
    return Choice(f, b, action, reason=reason, minor_version=mvc)  # type: ignore[arg-type]


def _companion_pins(
    provider: StackProvider, f: str, b: Build, pins: _Pins, notes: List[str]
) -> None:
    installed = pins.installed
    label = _local_label(b)
    listed = {split_requirement(r)[0] for r in b.companions}
    for other in provider._companion_names(f):
        if other in installed and other not in listed:
            notes.append(
                f"{other} {installed[other]} is installed, but the recipes name no {other} for "
                f"{display_name(f)} {_label_version(b)}: reinstall it to match"
            )
    for req in b.companions:
        name, ver = split_requirement(req)
        if ver and name in installed:
            if label and "+" not in ver:
                ver = f"{ver}+{label}"  # the companion built for the same CUDA, from the same index
            pins.add(
                name,
                ver,
                f"companion of {display_name(f)} {_label_version(b)}",
                index_url=b.index_url,
            )


@dataclasses.dataclass
class _CudnnOut:
    main: Optional[CudnnCandidate] = None
    apt: Dict[str, str] = dataclasses.field(default_factory=dict)
    conda: Dict[str, str] = dataclasses.field(default_factory=dict)
    runtime: Dict[str, str] = dataclasses.field(default_factory=dict)
    copies: Dict[str, CudnnChoice] = dataclasses.field(default_factory=dict)


def _cudnn_choices(
    env: Environment,
    provider: StackProvider,
    result: Result[Ident],
    pins: _Pins,
    notes: List[str],
    changed_builds: Sequence[Build],
) -> _CudnnOut:
    """The copy of each cuDNN major, newest major first, with its pip, apt or conda pin."""
    m = result.mapping
    out = _CudnnOut()
    for ident in sorted((i for i in m if i.kind == "cudnn"), key=lambda i: -int(i.name)):
        cc: CudnnCandidate = m[ident]
        if out.main is None:
            out.main = cc
        out.runtime[str(cc.major)] = cc.version
        out.copies[str(cc.major)] = CudnnChoice(
            cc.source, Package(cc.package, cc.package_version) if cc.package else None, cc.directory
        )
        users = [r.parent for r in result.criteria.get(ident, ())]
        why = f"the libcudnn.so.{cc.major} for {', '.join(users)}"
        if cc.source == "pip" and cc.package and cc.package_version:
            _pip_cudnn_pin(provider, result, cc, why, pins, notes, changed_builds)
        elif cc.source == "apt" and cc.package and cc.package_version:
            if cc.state in ("new", "reinstall"):
                out.apt[cc.package] = cc.package_version
                pins.pins.append(_apt_pin(env, cc, why))
        elif cc.source == "conda" and cc.package and cc.package_version:
            if cc.state == "new":
                out.conda[cc.package] = cc.package_version
                pins.pins.append(
                    Pin(
                        cc.package,
                        cc.package_version,
                        index_url="conda-forge",
                        action="install",
                        why=why,
                        size_bytes=cc.size_bytes,
                        manager="conda",
                    )
                )
        if cc.state == "loaded":
            notes.append(f"cuDNN {cc.major}: keeps {cc.label}, which every framework already loads")
    return out


def _pip_cudnn_pin(
    provider: StackProvider,
    result: Result[Ident],
    cc: CudnnCandidate,
    why: str,
    pins: _Pins,
    notes: List[str],
    changed_builds: Sequence[Build],
) -> None:
    assert cc.package and cc.package_version
    repinned = [
        b
        for b in changed_builds
        if cudnn_pin(b.requires)[0] == cc.package and cudnn_pin(b.requires)[1] != cc.package_version
    ]
    force = cc.state == "reinstall"
    have = pins.installed.get(cc.package)
    if repinned and have == cc.package_version:
        # the framework install moves it; set it back right after
        pins.pins.append(
            Pin(
                cc.package,
                cc.package_version,
                action="install",
                installed=have,
                why=why
                + f"; {display_name(repinned[0].framework)} pins {cudnn_pin(repinned[0].requires)[1]}, "
                "a newer cuDNN minor is safe at run time",
                size_bytes=None,
            )
        )
        pins.names[cc.package] = cc.package_version
    else:
        pins.add(
            cc.package,
            cc.package_version,
            why + (" (its files are missing: reinstall)" if force else ""),
            size=cc.size_bytes,
            force=force,
        )
    chosen = [result.mapping[framework_id(f)].build for f in provider.frameworks]
    pinned_pkgs = {
        cudnn_pin(b.requires)[1] for b in chosen if cudnn_pin(b.requires)[0] == cc.package
    }
    if any(version_key(cc.package_version) > version_key(v) for v in pinned_pkgs if v):
        notes.append(
            f"{cc.package} {cc.package_version} is above a framework's == pin: pip reports the "
            "pin as broken, but a newer cuDNN minor is safe at run time"
        )


def _apt_pin(env: Environment, cc: CudnnCandidate, why: str) -> Pin:
    assert cc.package and cc.package_version
    have_apt = _apt_installed(env).get(cc.package)
    if have_apt is None or have_apt == cc.package_version:
        action = "install"
    elif version_key(cc.package_version) > version_key(have_apt):
        action = "upgrade"
    else:
        action = "downgrade"
    return Pin(
        cc.package,
        cc.package_version,
        index_url=None,
        action=action,  # type: ignore[arg-type]
        installed=have_apt,
        why=why,
        size_bytes=cc.size_bytes,
        manager="apt",
    )


def _removals(result: Result[Ident], pins: _Pins) -> None:
    """Distributions that must go (another pip cuDNN wheel of a major that now comes from
    elsewhere)."""
    installed = pins.installed
    for ident, cand in sorted(result.mapping.items()):
        if (
            isinstance(cand, PackageCandidate)
            and cand.version is None
            and cand.manager == "pip"
            and cand.name in installed
            and cand.name not in pins.names
        ):
            whys = [
                f"{r.parent} {r.text}"
                for r in result.criteria.get(ident, ())
                if not r.accepts(PackageCandidate("pip", cand.name, installed[cand.name]))
            ]
            pins.pins.append(
                Pin(
                    cand.name,
                    installed[cand.name],
                    action="remove",
                    installed=installed[cand.name],
                    why=whys[0] if whys else "no longer needed",
                )
            )


def _apt_installed(env: Environment) -> Dict[str, str]:
    """apt packages that own a library copy on disk: {"libcudnn8": "8.9.6.50-1+cuda12.2"}."""
    out: Dict[str, str] = {}
    for c in env.libraries:
        if c.origin == "apt" and c.package is not None and c.package.version:
            out[c.package.name] = c.package.version
    return out


def _why_change(provider: StackProvider, f: str, c: BuildCandidate, result: Result[Ident]) -> str:
    """Why the installed build of `f` could not stay, in words (the first requirement it
    fails), or what the user asked."""
    installed = (
        provider.build_candidates[f][0]
        if provider.build_candidates[f] and provider.build_candidates[f][0].installed
        else None
    )
    if installed is None:
        return f"{display_name(f)} is wanted and not installed"
    for r in result.criteria.get(framework_id(f), ()):
        if r.intent and not r.accepts(installed):
            return f"you asked for {r.text} ({r.parent})"
        if not r.accepts(installed):
            return (
                f"{installed.label} is not a CUDA build and this machine has a GPU"
                if "CUDA build" in r.text
                else f"{r.text} ({r.parent})"
            )
    m = result.mapping
    failed: List[str] = []
    for d in provider.get_dependencies(installed):
        target = m.get(d.identifier)
        if target is None and d.identifier.kind == "fact":
            target = provider.facts[d.identifier]
        if target is not None and not d.accepts(target):
            what = (
                target.text if isinstance(target, Fact) else getattr(target, "label", str(target))
            )
            failed.append(f"{d.text}, but {what}")
    if failed:
        return f"{installed.label} " + "; ".join(failed)
    for d in provider.get_dependencies(installed):
        if d.identifier.kind == "cudnn":
            other = [r for r in result.criteria.get(d.identifier, ()) if r.parent != c.label]
            if other:
                return f"{installed.label} {d.text}; no cuDNN also fits {other[0].parent} ({other[0].text})"
    return f"{installed.label} cannot share a stack with the other frameworks"


# -- failure -> data (fixer.render.conflicts says it in words) ------------------------------


class NoStack(Exception):
    """No stack fits: the clashes and the nearest ways out, as data. fixer.pipeline.resolve
    raises it as Unsatisfiable (exit 1); fixer.render.conflicts says it in words."""

    def __init__(
        self, frameworks: Sequence[str], clashes: Sequence[Clash], ways_out: Sequence[WayOut]
    ) -> None:
        super().__init__("no stack fits")
        self.frameworks = tuple(frameworks)
        self.clashes = tuple(clashes)
        self.ways_out = tuple(ways_out)


def _no_stack(
    env: Environment,
    intent: Intent,
    recipes: Recipes,
    provider: StackProvider,
    conflicts: Sequence[Conflict[Ident]],
) -> NoStack:
    clashes = _explain(provider) or _clashes(provider, conflicts)
    return NoStack(provider.frameworks, clashes, _ways_out(env, intent, recipes))


def _first_viable(
    provider: StackProvider, f: str, roots: Sequence[Req]
) -> Optional[BuildCandidate]:
    """The build of `f` the solver tries first among those the machine and the intent allow."""
    mine = [r for r in roots if r.identifier == framework_id(f)]
    for c in provider.build_candidates.get(f, ()):
        if not all(r.accepts(c) for r in mine):
            continue
        if all(
            d.accepts(provider.facts[d.identifier])
            for d in provider.get_dependencies(c)
            if d.identifier.kind == "fact"
        ):
            return c
    return None


def _need(r: Req) -> Need:
    return Need(parent=r.parent, text=r.text, asked=r.intent)


def _refusal(who: str, r: Req, against: Any) -> Refusal:
    """`who` fails its requirement `r` because of `against`: a machine fact or a chosen candidate."""
    if isinstance(against, Fact):
        return Refusal(
            who=who, text=r.text, against=against.text, hardware=against.name in (DRIVER, GPU)
        )
    return Refusal(
        who=who, text=r.text, against=getattr(against, "label", str(against)), chosen=True
    )


def _explain(provider: StackProvider) -> List[Clash]:
    """The clash as the user sees it: a framework no build of which fits the machine and the
    intent; or, per cuDNN major, what each framework needs and what stops every copy."""
    out: List[Clash] = []
    roots = provider.roots()
    firsts: Dict[str, BuildCandidate] = {}
    for f in provider.frameworks:
        c = _first_viable(provider, f, roots)
        if c is None:
            out.append(_no_build(provider, f, roots))
        else:
            firsts[f] = c
    if out:
        return out
    majors: Dict[Ident, List[Req]] = {}
    for f, c in firsts.items():
        for d in provider.get_dependencies(c):
            if d.identifier.kind == "cudnn":
                majors.setdefault(d.identifier, []).append(d)
    for ident, needs in majors.items():
        clash = _cudnn_clash(provider, roots, ident, needs)
        if clash is not None:
            out.append(clash)
    return out


def _no_build(provider: StackProvider, f: str, roots: Sequence[Req]) -> Clash:
    """No build of framework `f` fits: what the machine refuses of each build the intent allows."""
    reasons: List[Refusal] = []
    mine = [r for r in roots if r.identifier == framework_id(f)]
    for cand in provider.build_candidates.get(f, ()):
        if any(not r.accepts(cand) for r in mine):
            continue  # the intent rules it out; not a reason worth listing per build
        for d in provider.get_dependencies(cand):
            if d.identifier.kind == "fact" and not d.accepts(provider.facts[d.identifier]):
                reasons.append(_refusal(cand.label, d, provider.facts[d.identifier]))
    return Clash(
        "no-build", f, needs=tuple(_need(r) for r in mine if r.intent), refusals=tuple(reasons)
    )


def _cudnn_clash(
    provider: StackProvider, roots: Sequence[Req], ident: Ident, needs: List[Req]
) -> Optional[Clash]:
    """cuDNN major `ident`: no copy meets every need, or what blocks every copy that does."""
    held = [r for r in roots if r.identifier == ident]
    reqs = needs + held
    cands = provider.cudnn_for(int(ident.name))
    fits = [c for c in cands if all(r.accepts(c) for r in reqs)]
    if not fits:
        return Clash(
            "no-copy", ident.name, needs=tuple(map(_need, needs)), held=tuple(map(_need, held))
        )
    refusals: List[Refusal] = []
    holds: List[Need] = []
    for fit in fits:
        for d in provider.get_dependencies(fit):
            if d.identifier.kind == "fact":
                fact = provider.facts[d.identifier]
                if not d.accepts(fact):
                    refusals.append(_refusal(fit.label, d, fact))
            else:
                holds += _holds(provider, roots, d)
    if not (refusals or holds):
        return None
    return Clash(
        "blocked",
        ident.name,
        needs=tuple(map(_need, needs)),
        held=tuple(dict.fromkeys(holds)),
        refusals=tuple(dict.fromkeys(refusals)),
    )


def _holds(provider: StackProvider, roots: Sequence[Req], d: Req) -> List[Need]:
    """The user's own asks that keep a copy's dependency `d` from being met."""
    out: List[Need] = []
    if d.identifier.kind == "framework":
        # the copy is kept only while a framework keeps a build of this major: the user's own
        # ask for that framework holds it when no build meets both
        builds = provider.build_candidates.get(d.identifier.name, ())
        for r in roots:
            if (
                r.identifier == d.identifier
                and r.intent
                and not any(r.accepts(b) and d.accepts(b) for b in builds)
            ):
                out.append(_need(r))
        return out
    for r in roots:
        if r.identifier == d.identifier and r.intent:
            probe = PackageCandidate(d.identifier.kind, d.identifier.name, (d.prefer or (None,))[0])
            if not r.accepts(probe) or not d.accepts(probe):
                out.append(_need(r))
    return out


def _clashes(provider: StackProvider, conflicts: Sequence[Conflict[Ident]]) -> List[Clash]:
    """The solver's conflicts as clashes, the most telling first: what the user asked, then the
    hardware (driver, GPU), then the rest."""
    out: List[Clash] = []
    facts = provider.facts
    for c in conflicts:
        if c.candidate is not None:
            out += [
                Clash("refused", c.identifier.name, refusals=(_refusal(r.parent, r, c.candidate),))
                for r in c.requirements
            ]
            continue
        reqs = c.requirements
        if c.identifier.kind == "framework":
            asked = [r for r in reqs if r.intent or r.parent == "this machine"]
            if asked:
                out.append(Clash("no-build-is", c.identifier.name, needs=tuple(map(_need, asked))))
            continue
        if c.identifier.kind == "cudnn":
            out.append(Clash("no-single-copy", c.identifier.name, needs=tuple(map(_need, reqs))))
            continue
        if c.identifier.kind == "fact":
            out += [
                Clash(
                    "refused",
                    c.identifier.name,
                    refusals=(_refusal(r.parent, r, facts[c.identifier]),),
                )
                for r in reqs
            ]
            continue
        out.append(Clash("requirements", c.identifier.name, needs=tuple(map(_need, reqs))))

    def rank(clash: Clash) -> int:
        if any(n.asked or n.parent.startswith("--") for n in clash.needs + clash.held):
            return 0
        return 1 if any(r.hardware for r in clash.refusals) else 2

    return sorted(dict.fromkeys(out), key=rank)


def _ways_out(env: Environment, intent: Intent, recipes: Recipes) -> List[WayOut]:
    """The nearest ways out: drop one thing the user asked at a time (or one framework) and
    say what the stack would then change."""
    ways: List[WayOut] = []
    relaxed: List[Tuple[WayOut, Intent]] = []
    for name in intent.keep:
        relaxed.append(
            (
                WayOut("keep", name),
                dataclasses.replace(intent, keep=tuple(k for k in intent.keep if k != name)),
            )
        )
    for f, v in intent.versions.items():
        relaxed.append(
            (
                WayOut("version", f, v),
                dataclasses.replace(
                    intent, versions={k: w for k, w in intent.versions.items() if k != f}
                ),
            )
        )
    if intent.cuda:
        relaxed.append((WayOut("cuda", value=intent.cuda), dataclasses.replace(intent, cuda=None)))
    if intent.cudnn_from:
        relaxed.append(
            (
                WayOut("cudnn-from", value=intent.cudnn_from),
                dataclasses.replace(intent, cudnn_from=None),
            )
        )
    envs: List[Tuple[WayOut, Intent, Environment]] = [(way, it, env) for way, it in relaxed]
    wanted = list(dict.fromkeys([fb.framework for fb in env.frameworks] + list(intent.frameworks)))
    if len(wanted) > 1:
        for f in wanted:
            envs.append(
                (
                    WayOut("framework", f),
                    dataclasses.replace(
                        intent,
                        frameworks=tuple(x for x in intent.frameworks if x != f),
                        versions={k: v for k, v in intent.versions.items() if k != f},
                    ),
                    dataclasses.replace(
                        env, frameworks=tuple(x for x in env.frameworks if x.framework != f)
                    ),
                )
            )
    for way, it, env in envs:
        try:
            provider = StackProvider(env, it, recipes)
            result = Solver(provider, max_nodes=5000).resolve(provider.roots())
        except (NoSolution, BadIntent):
            continue
        stack = _to_stack(env, it, recipes, provider, result)
        ways.append(
            dataclasses.replace(way, changes=tuple(p for p in stack.pins if p.action != "keep"))
        )
    return ways
