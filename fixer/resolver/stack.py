"""resolve(Environment, Intent, Recipes) -> Stack: run the solver over the provider, turn the
assignment into a Stack (choices, pins, apt/conda packages, loader fixes), and a failure into
an Unsatisfiable carrying the clashes and the nearest ways out.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import Unsatisfiable, UsageError
from .._versions import public, version_key
from ..model import Build, Choice, Environment, Intent, Pin, Recipes, Stack
from ..rules import cudnn_pin, display_name, split_requirement
from .loader_fixes import env_fixes
from .provider import (
    BuildCandidate,
    CudnnCandidate,
    Fact,
    Ident,
    PackageCandidate,
    Req,
    StackProvider,
    _label_version,
    _local_label,
    _parse_package,
    framework_id,
)
from .solver import BaseReporter, Conflict, NoSolution, Result, Solver


def resolve(env: Environment, intent: Intent, recipes: Recipes, *, reporter: Optional[BaseReporter[Ident]] = None) -> Stack:
    """The stack this machine should run: the frameworks installed (plus those asked for),
    each on a build that fits the driver, the GPU and Python, sharing one cuDNN per major,
    changing as little as possible. Raises Unsatisfiable (exit 1) with the clashes in words
    and the nearest ways out, UsageError (exit 2) for an intent the recipes cannot mean."""
    provider = StackProvider(env, intent, recipes)
    roots = provider.roots()
    try:
        result = Solver(provider, reporter).resolve(roots)
    except NoSolution as exc:
        raise _unsatisfiable(env, intent, recipes, provider, exc.conflicts) from None
    return _to_stack(env, intent, recipes, provider, result)


def _to_stack(env: Environment, intent: Intent, recipes: Recipes, provider: StackProvider, result: Result[Ident]) -> Stack:
    m = result.mapping
    installed = provider._installed_dists
    choices: List[Choice] = []
    pins: List[Pin] = []
    notes: List[str] = list(provider.notes)
    pinned_names: Dict[str, str] = {}
    changed_builds: List[Build] = []

    def add_pin(name: str, version: str, why: str, index_url: Optional[str] = None,
                size: Optional[int] = None, force: bool = False) -> None:
        if size is None:
            size = recipes.download_size(name, version)
        have = installed.get(name)
        if have is None:
            action = "install"
        elif have == version and not force:
            action = "keep"
        elif have == version:
            action = "install"   # same version again: a reinstall of files that are missing
        else:
            action = "upgrade" if version_key(version) > version_key(have) or (
                version_key(version) == version_key(have) and version != have) else "downgrade"
        pins.append(Pin(name=name, version=version, index_url=index_url, action=action,  # type: ignore[arg-type]
                        installed=have, why=why, size_bytes=size))
        pinned_names[name] = version

    for f in provider.frameworks:
        c: BuildCandidate = m[framework_id(f)]
        b = c.build
        if c.installed:
            fb = env.framework(f)
            choices.append(Choice(f, b, "keep", reason="installed and fits this machine"))
            if fb is not None:   # the dist-info version: torch/version.py may add a local tag pip never saw
                add_pin(fb.distribution, c.installed_version or fb.version, f"{display_name(f)} as installed")
            continue
        action = "change" if c.installed_version else "install"
        reason = _why_change(provider, f, c, result)
        choices.append(Choice(f, b, action, reason=reason))  # type: ignore[arg-type]
        changed_builds.append(b)
        for i, req in enumerate(b.packages):
            name, ver = split_requirement(req)
            if ver:
                # an extra of the same version (tensorflow -> tensorflow[and-cuda]) is still an install:
                # pip then adds what the extra brings
                add_pin(name, ver, reason if i == 0 else f"part of {display_name(f)} {b.version}",
                        index_url=b.index_url, size=b.size_bytes if i == 0 else None, force="[" in req)
        label = _local_label(b)
        listed = {split_requirement(r)[0] for r in b.companions}
        for other in provider._companion_names(f):
            if other in installed and other not in listed:
                notes.append(f"{other} {installed[other]} is installed, but the recipes name no {other} for "
                             f"{display_name(f)} {_label_version(b)}: reinstall it to match")
        for req in b.companions:
            name, ver = split_requirement(req)
            if ver and name in installed:
                if label and "+" not in ver:
                    ver = f"{ver}+{label}"   # the companion built for the same CUDA, from the same index
                add_pin(name, ver, f"companion of {display_name(f)} {_label_version(b)}", index_url=b.index_url)
        if c.installed_version:
            notes.append(f"{display_name(f)} {c.installed_version} -> {_label_version(b)}: {reason}")

    cudnn_main: Optional[CudnnCandidate] = None
    apt: Dict[str, str] = {}
    conda: Dict[str, str] = {}
    cudnn_runtime: Dict[str, str] = {}
    cudnn_packages: Dict[str, str] = {}
    for ident in sorted((i for i in m if i.kind == "cudnn"), key=lambda i: -int(i.name)):
        cc: CudnnCandidate = m[ident]
        if cudnn_main is None:
            cudnn_main = cc
        cudnn_runtime[str(cc.major)] = cc.version
        cudnn_packages[str(cc.major)] = f"{cc.package} {cc.package_version}" if cc.package else (cc.directory or cc.source)
        users = [r.parent for r in result.criteria.get(ident, ())]
        why = f"the libcudnn.so.{cc.major} for {', '.join(users)}"
        if cc.source == "pip" and cc.package and cc.package_version:
            repinned = [b for b in changed_builds if cudnn_pin(b.requires)[0] == cc.package and cudnn_pin(b.requires)[1] != cc.package_version]
            force = cc.state == "reinstall"
            have = installed.get(cc.package)
            if repinned and have == cc.package_version:
                # the framework install moves it; set it back right after
                pins.append(Pin(cc.package, cc.package_version, action="install", installed=have,
                                why=why + f"; {display_name(repinned[0].framework)} pins {cudnn_pin(repinned[0].requires)[1]}, "
                                "a newer cuDNN minor is safe at run time", size_bytes=None))
                pinned_names[cc.package] = cc.package_version
            else:
                add_pin(cc.package, cc.package_version,
                        why + (" (its files are missing: reinstall)" if force else ""), size=cc.size_bytes, force=force)
            chosen = [m[framework_id(f)].build for f in provider.frameworks]
            pinned_pkgs = {cudnn_pin(b.requires)[1] for b in chosen if cudnn_pin(b.requires)[0] == cc.package}
            if any(version_key(cc.package_version) > version_key(v) for v in pinned_pkgs if v):
                notes.append(f"{cc.package} {cc.package_version} is above a framework's == pin: pip reports the "
                             "pin as broken, but a newer cuDNN minor is safe at run time")
        elif cc.source == "apt" and cc.package and cc.package_version:
            if cc.state in ("new", "reinstall"):
                apt[cc.package] = cc.package_version
                have_apt = _apt_installed(env).get(cc.package)
                action = "install" if have_apt is None else "install" if have_apt == cc.package_version else \
                    "upgrade" if version_key(cc.package_version) > version_key(have_apt) else "downgrade"
                pins.append(Pin(cc.package, cc.package_version, index_url=None, action=action,  # type: ignore[arg-type]
                                installed=have_apt, why=why, size_bytes=cc.size_bytes, manager="apt"))
        elif cc.source == "conda" and cc.package and cc.package_version:
            if cc.state == "new":
                conda[cc.package] = cc.package_version
                pins.append(Pin(cc.package, cc.package_version, index_url="conda-forge", action="install",
                                why=why, size_bytes=cc.size_bytes, manager="conda"))
        if cc.state == "loaded":
            notes.append(f"cuDNN {cc.major}: keeps {cc.label}, which every framework already loads")

    # distributions that must go (another pip cuDNN wheel of a major that now comes from elsewhere)
    for ident, cand in sorted(m.items()):
        if isinstance(cand, PackageCandidate) and cand.version is None and cand.manager == "pip" \
                and cand.name in installed and cand.name not in pinned_names:
            whys = [f"{r.parent} {r.text}" for r in result.criteria.get(ident, ()) if not r.accepts(
                PackageCandidate("pip", cand.name, installed[cand.name]))]
            pins.append(Pin(cand.name, installed[cand.name], action="remove", installed=installed[cand.name],
                            why=whys[0] if whys else "no longer needed"))
    fixes = env_fixes(env, provider, m)
    for fx in fixes:
        notes.append(fx.why)
    if not result.complete:
        notes.append("the search hit its node budget: this stack fits but may not be the smallest change")
    return Stack(
        choices=tuple(choices),
        pins=tuple(pins),
        cudnn=(".".join(str(x) for x in version_key(cudnn_main.version)[:3]) if cudnn_main else None),
        cudnn_from=(cudnn_main.source if cudnn_main else None),
        env_fixes=tuple(fixes),
        apt=apt,
        conda=conda,
        cudnn_runtime=cudnn_runtime,
        cudnn_packages=cudnn_packages,
        notes=tuple(dict.fromkeys(notes)),
    )


def _apt_installed(env: Environment) -> Dict[str, str]:
    """apt packages that own a library copy on disk: {"libcudnn8": "8.9.6.50-1+cuda12.2"}."""
    out: Dict[str, str] = {}
    for c in env.libraries:
        if c.origin == "apt":
            name, ver = _parse_package(c.package)
            if name and ver:
                out[name] = ver
    return out


def _why_change(provider: StackProvider, f: str, c: BuildCandidate, result: Result[Ident]) -> str:
    """Why the installed build of `f` could not stay, in words (the first requirement it
    fails), or what the user asked."""
    installed = provider.build_candidates[f][0] if provider.build_candidates[f] and \
        provider.build_candidates[f][0].installed else None
    if installed is None:
        return f"{display_name(f)} is wanted and not installed"
    for r in result.criteria.get(framework_id(f), ()):
        if r.intent and not r.accepts(installed):
            return f"you asked for {r.text} ({r.parent})"
        if not r.accepts(installed):
            return f"{installed.label} is not a CUDA build and this machine has a GPU" \
                if "CUDA build" in r.text else f"{r.text} ({r.parent})"
    m = result.mapping
    failed: List[str] = []
    for d in provider.get_dependencies(installed):
        target = m.get(d.identifier)
        if target is None and d.identifier.kind == "fact":
            target = provider.facts[d.identifier]
        if target is not None and not d.accepts(target):
            what = target.text if isinstance(target, Fact) else getattr(target, "label", str(target))
            failed.append(f"{d.text}, but {what}")
    if failed:
        return f"{installed.label} " + "; ".join(failed)
    for d in provider.get_dependencies(installed):
        if d.identifier.kind == "cudnn":
            other = [r for r in result.criteria.get(d.identifier, ()) if r.parent != c.label]
            if other:
                return f"{installed.label} {d.text}; no cuDNN also fits {other[0].parent} ({other[0].text})"
    return f"{installed.label} cannot share a stack with the other frameworks"


# -- failure -> words ------------------------------------------------------------------------


def _unsatisfiable(env: Environment, intent: Intent, recipes: Recipes, provider: StackProvider,
                   conflicts: Sequence[Conflict[Ident]]) -> Unsatisfiable:
    clashes = (_explain(provider) or _clash_sentences(provider, conflicts))[:8]
    ways = _ways_out(env, intent, recipes)
    names = ", ".join(display_name(f) for f in provider.frameworks) or "the frameworks"
    return Unsatisfiable(f"no stack fits {names} on this machine", clashes=clashes, ways_out=ways)


def _first_viable(provider: StackProvider, f: str, roots: Sequence[Req]) -> Optional[BuildCandidate]:
    """The build of `f` the solver tries first among those the machine and the intent allow."""
    mine = [r for r in roots if r.identifier == framework_id(f)]
    for c in provider.build_candidates.get(f, ()):
        if not all(r.accepts(c) for r in mine):
            continue
        if all(d.accepts(provider.facts[d.identifier]) for d in provider.get_dependencies(c)
               if d.identifier.kind == "fact"):
            return c
    return None


def _explain(provider: StackProvider) -> List[str]:
    """The clash in the user's words: a framework no build of which fits the machine and the
    intent; or, per cuDNN major, what each framework needs and what stops every copy."""
    out: List[str] = []
    roots = provider.roots()
    firsts: Dict[str, BuildCandidate] = {}
    for f in provider.frameworks:
        c = _first_viable(provider, f, roots)
        if c is None:
            reasons: List[str] = []
            mine = [r for r in roots if r.identifier == framework_id(f)]
            for cand in provider.build_candidates.get(f, ()):
                failed = [f"{r.text} ({r.parent})" for r in mine if not r.accepts(cand)]
                if failed:
                    continue   # the intent rules it out; not a reason worth listing per build
                for d in provider.get_dependencies(cand):
                    if d.identifier.kind == "fact" and not d.accepts(provider.facts[d.identifier]):
                        reasons.append(f"{cand.label} {d.text}, but {provider.facts[d.identifier].text}")
            asked = [f"{r.text} ({r.parent})" for r in mine if r.intent]
            head = f"{display_name(f)}: no build fits" + (" " + " and ".join(asked) if asked else "")
            out.append(head + (": " + "; ".join(_summarise(reasons)[:3]) if reasons else ""))
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
        held = [r for r in roots if r.identifier == ident]
        reqs = needs + held
        cands = provider.cudnn_for(int(ident.name))
        fits = [c for c in cands if all(r.accepts(c) for r in reqs)]
        words = "; ".join(f"{r.parent} {r.text}" for r in needs)
        if not fits:
            out.append(f"cuDNN {ident.name}: {words}; no cuDNN copy satisfies all of them"
                       + ("" if not held else " and " + "; ".join(f"{r.text} ({r.parent})" for r in held)))
            continue
        blocks: List[str] = []
        for fit in fits:
            for d in provider.get_dependencies(fit):
                if d.identifier.kind == "fact":
                    fact = provider.facts[d.identifier]
                    if not d.accepts(fact):
                        blocks.append(f"{fit.label} {d.text}, but {fact.text}")
                else:
                    for r in roots:
                        if r.identifier == d.identifier and r.intent:
                            probe = PackageCandidate(d.identifier.kind, d.identifier.name,
                                                     (d.prefer or (None,))[0])
                            if not r.accepts(probe) or not d.accepts(probe):
                                blocks.append(f"{r.parent} holds {r.text.replace(' stays at ', ' at ')}")
        if blocks:
            out.append(f"cuDNN {ident.name}: {words}; " + "; ".join(list(dict.fromkeys(blocks))[:2]))
    return out


def _clash_sentences(provider: StackProvider, conflicts: Sequence[Conflict[Ident]]) -> List[str]:
    out: List[str] = []
    facts = provider.facts
    for c in conflicts:
        if c.candidate is not None:
            cand = c.candidate
            what = cand.text if isinstance(cand, Fact) else getattr(cand, "label", str(cand))
            for r in c.requirements:
                out.append(f"{r.parent} {r.text}, but {what}" if isinstance(cand, Fact)
                           else f"{r.parent} {r.text}, but {what} is already chosen")
            continue
        reqs = c.requirements
        if c.identifier.kind == "framework":
            intent_reqs = [r for r in reqs if r.intent or r.parent == "this machine"]
            if intent_reqs:
                out.append(f"{display_name(c.identifier.name)}: no build is " +
                           " and ".join(f"{r.text} ({r.parent})" for r in intent_reqs))
            continue
        if c.identifier.kind == "cudnn":
            major = c.identifier.name
            parts = [f"{r.parent} {r.text}" for r in reqs]
            out.append(f"cuDNN {major}: " + "; ".join(parts) + " - no single copy fits all")
            continue
        if c.identifier.kind == "fact":
            fact = facts[c.identifier]
            for r in reqs:
                out.append(f"{r.parent} {r.text}, but {fact.text}")
            continue
        parts = [f"{r.parent}: {r.text}" for r in reqs]
        out.append(f"{c.identifier.name}: " + "; ".join(parts))
    # most telling first: what the user asked and the hardware, then the rest; dedupe
    uniq = list(dict.fromkeys(out))
    uniq.sort(key=lambda s: (0 if "--" in s else 1 if "driver" in s or "kernels" in s or "SM" in s else 2))
    return _summarise(uniq)[:8]


def _summarise(lines: List[str]) -> List[str]:
    """Many builds fail for one reason: "torch 2.11.0+cu130 needs driver >= 580 ..., but driver
    570" repeated per build becomes one line per distinct reason."""
    seen: Dict[str, List[str]] = {}
    order: List[str] = []
    for line in lines:
        m = re.match(r"^(\S+ \S+(?: \(installed\))?) (needs .*|ships .*)$", line)
        if m:
            reason = m.group(2)
            if reason not in seen:
                seen[reason] = []
                order.append(reason)
            seen[reason].append(m.group(1))
        else:
            order.append(line)
            seen.setdefault(line, [])
    out = []
    for key in order:
        who = seen.get(key)
        if who:
            head = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
            out.append(f"{head} {key}")
        else:
            out.append(key)
    return list(dict.fromkeys(out))


def _ways_out(env: Environment, intent: Intent, recipes: Recipes) -> List[str]:
    """The nearest ways out: drop one thing the user asked at a time and say what the stack
    would then change."""
    ways: List[str] = []
    relaxed: List[Tuple[str, Intent]] = []
    for name in intent.keep:
        relaxed.append((f"without --keep {name}", dataclasses.replace(intent, keep=tuple(k for k in intent.keep if k != name))))
    for f, v in intent.versions.items():
        relaxed.append((f"without --{f} {v}", dataclasses.replace(
            intent, versions={k: w for k, w in intent.versions.items() if k != f})))
    if intent.cuda:
        relaxed.append((f"without --cuda {intent.cuda}", dataclasses.replace(intent, cuda=None)))
    if intent.cudnn_from:
        relaxed.append((f"without --cudnn-from {intent.cudnn_from}", dataclasses.replace(intent, cudnn_from=None)))
    envs: List[Tuple[str, Intent, Environment]] = [(label, it, env) for label, it in relaxed]
    wanted = list(dict.fromkeys([fb.framework for fb in env.frameworks] + list(intent.frameworks)))
    if len(wanted) > 1:
        for f in wanted:
            envs.append((f"without {display_name(f)}",
                         dataclasses.replace(intent, frameworks=tuple(x for x in intent.frameworks if x != f),
                                             versions={k: v for k, v in intent.versions.items() if k != f}),
                         dataclasses.replace(env, frameworks=tuple(x for x in env.frameworks if x.framework != f))))
    for label, it, env in envs:
        try:
            provider = StackProvider(env, it, recipes)
            result = Solver(provider, max_nodes=5000).resolve(provider.roots())
        except (NoSolution, UsageError):
            continue
        stack = _to_stack(env, it, recipes, provider, result)
        changes = [_pin_words(p) for p in stack.pins if p.action != "keep"]
        ways.append(f"{label}: " + ("; ".join(changes[:4]) if changes else "nothing needs to change"))
    if not ways:
        ways.append("a newer driver (R580 or later runs every CUDA 12 and 13 build) or another GPU type")
    return ways


def _pin_words(p: Pin) -> str:
    if p.action == "remove":
        return f"remove {p.name}"
    if p.action == "install" and p.installed == p.version:
        return f"reinstall {p.name} {p.version}"
    if p.installed and public(p.installed) == public(p.version) and p.installed != p.version:
        return f"switch {p.name} {p.installed} to the {p.version} build"
    verb = {"install": "install", "upgrade": "raise", "downgrade": "lower"}.get(p.action, p.action)
    if p.name.startswith("nvidia-cudnn") and p.action == "upgrade":
        return f"raise {p.name} to {p.version} (safe at run time)"
    return f"{verb} {p.name} to {p.version}" if p.installed else f"{verb} {p.name}=={p.version}"
