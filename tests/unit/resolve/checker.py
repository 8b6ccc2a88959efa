"""An independent checker of the rules, written from data/research/compat.md without the resolver's code:
used by the property tests on every stack the resolver returns, and by a brute-force search
over small recipe sets."""

from __future__ import annotations

import itertools
import re
from typing import Dict, List, Optional, Tuple

from packaging.specifiers import SpecifierSet

from fixer import model as m

# a cuDNN choice: (version, CUDA major or None, source, pip distribution or None)
Cudnn = Tuple[str, Optional[int], str, Optional[str]]


def nums(v: Optional[str]) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", (v or "").split("+")[0].split("-")[0]))


def _kernels_ok(b: m.Build, cc: str) -> bool:
    have = nums(cc)[:2]
    lowest = getattr(b, "min_compute_capability", None)
    if lowest and have < nums(lowest)[:2]:
        return False
    if not b.compute_capabilities and not b.ptx:
        return True
    if any(nums(s)[:1] == have[:1] and nums(s)[:2] <= have for s in b.compute_capabilities):
        return True
    return bool(b.ptx and nums(b.ptx)[:2] <= have)


def wanted(env: m.Environment, intent: m.Intent) -> List[str]:
    """--framework names the frameworks to make work; without it, those installed (the CLI's
    help for --framework: "Framework to make work (repeatable; default: those installed)")."""
    if intent.frameworks:
        return list(dict.fromkeys(intent.frameworks))
    return list(dict.fromkeys(f.framework for f in env.frameworks))


def violations(
    env: m.Environment,
    intent: m.Intent,
    recipes: m.Recipes,
    choices: Dict[str, Tuple[m.Build, bool]],
    cudnn: Dict[int, Cudnn],
) -> List[str]:
    """Every rule the assignment breaks (empty: it is a valid stack)."""
    bad: List[str] = []
    if set(choices) != set(wanted(env, intent)):
        bad.append(f"frameworks {sorted(choices)} != wanted {wanted(env, intent)}")
    for f, (b, kept) in choices.items():
        bad += _build_violations(env, intent, recipes, f, b, kept)
        bad += _cudnn_of_build(f, b, cudnn)
    bad += _cuda_asked(intent, recipes, choices)
    bad += _cudnn_copies(env, intent, recipes, choices, cudnn)
    return bad


def _build_violations(
    env: m.Environment, intent: m.Intent, recipes: m.Recipes, f: str, b: m.Build, kept: bool
) -> List[str]:
    """What one framework's build breaks: driver, kernels, Python, the asked version, --keep."""
    bad: List[str] = []
    ccs = [g.compute_capability for g in env.gpus if g.compute_capability]
    driver = env.driver.version
    py = env.python.version if env.python else None
    if env.gpus and not b.cuda:
        bad.append(f"{f}: CPU build on a GPU machine")
    if b.cuda and driver:
        floor = recipes.min_driver(b.cuda)
        if floor and nums(driver) < nums(floor):
            bad.append(f"{f}: driver {driver} < {floor}")
    if b.cuda:
        bad += [f"{f}: no kernels for {cc}" for cc in ccs if not _kernels_ok(b, cc)]
    if not kept and b.python and py and not SpecifierSet(b.python).contains(py):
        bad.append(f"{f}: python {py} not in {b.python}")
    want = intent.versions.get(f)
    if want and not (b.version.split("+")[0] == want or b.version.startswith(want + ".")):
        bad.append(f"{f}: version {b.version} != --{f} {want}")
    if f in intent.keep and not kept:
        bad.append(f"{f}: kept but changed")
    return bad


def _cudnn_of_build(f: str, b: m.Build, cudnn: Dict[int, Cudnn]) -> List[str]:
    """The cuDNN the build gets: its major, a minor at least the build's, the build's CUDA."""
    if not (b.cuda and b.cudnn):
        return []
    major = nums(b.cudnn)[0]
    have = cudnn.get(major)
    if have is None:
        return [f"{f}: no cuDNN {major}"]
    bad: List[str] = []
    ver, cm, _src, _dist = have
    if nums(ver)[:1] != (major,) or nums(ver)[:2] < nums(b.cudnn)[:2]:
        bad.append(f"{f}: cuDNN {ver} < built {b.cudnn}")
    if cm is not None and cm != nums(b.cuda)[0]:
        bad.append(f"{f}: cuDNN for CUDA {cm}, build is CUDA {b.cuda}")
    return bad


def _cuda_asked(
    intent: m.Intent, recipes: m.Recipes, choices: Dict[str, Tuple[m.Build, bool]]
) -> List[str]:
    """--cuda: every framework offered in that CUDA gets it."""
    if not intent.cuda:
        return []
    cuda = intent.cuda
    offered = [
        f
        for f in choices
        if any(
            x.cuda and (x.cuda == cuda or x.cuda.startswith(cuda + "."))
            for x in recipes.builds_for(f)
        )
    ]
    bad: List[str] = []
    for f in offered:
        c = choices[f][0].cuda or ""
        if not (c == cuda or c.startswith(cuda + ".")):
            bad.append(f"{f}: CUDA {c} != --cuda {cuda}")
    return bad


def _cudnn_copies(
    env: m.Environment,
    intent: m.Intent,
    recipes: m.Recipes,
    choices: Dict[str, Tuple[m.Build, bool]],
    cudnn: Dict[int, Cudnn],
) -> List[str]:
    """The cuDNN copies themselves: GPU range, --cudnn-from, one major per wheel, one conda major."""
    bad: List[str] = []
    ccs = [g.compute_capability for g in env.gpus if g.compute_capability]
    dists: Dict[str, int] = {}
    for major, (ver, _cm, src, dist) in cudnn.items():
        bad += _cudnn_gpu_range(recipes, ver, ccs)
        if (
            intent.cudnn_from
            and src != intent.cudnn_from
            and not _loaded_by_all(env, choices, major, ver, src, dist)
        ):
            # --cudnn-from says where a new copy comes from; a copy every framework of this
            # major already loads may stay (a working major is never taken away)
            bad.append(f"cuDNN {major} from {src}, asked {intent.cudnn_from}")
        if dist:
            if dist in dists:
                bad.append(f"{dist} would have to be cuDNN {dists[dist]} and {major}")
            dists[dist] = major
    if sum(1 for (_v, _c, src, _d) in cudnn.values() if src == "conda") > 1:
        # conda-forge has one `cudnn` package: one prefix holds one major of it
        bad.append("two cuDNN majors from conda (one `cudnn` package per prefix)")
    return bad


def _cudnn_gpu_range(recipes: m.Recipes, ver: str, ccs: List[str]) -> List[str]:
    rel = recipes.cudnn_release(ver)
    if rel is None:
        return []
    bad: List[str] = []
    for cc in ccs:
        if rel.min_compute_capability and nums(cc) < nums(rel.min_compute_capability):
            bad.append(f"cuDNN {ver} needs SM >= {rel.min_compute_capability}, GPU is {cc}")
        if rel.max_compute_capability and nums(cc) > nums(rel.max_compute_capability):
            bad.append(f"cuDNN {ver} supports SM <= {rel.max_compute_capability}, GPU is {cc}")
    return bad


def _loaded_by_all(
    env: m.Environment,
    choices: Dict[str, Tuple[m.Build, bool]],
    major: int,
    ver: str,
    src: str,
    dist: Optional[str],
) -> bool:
    """Every framework of `choices` that needs cuDNN `major` loads, today, a copy of `src` with
    this version (a pip copy's version is its wheel's)."""
    users = [
        f for f, (b, _k) in choices.items() if b.cuda and b.cudnn and nums(b.cudnn)[0] == major
    ]
    lds = [
        ld
        for ld in env.loads
        if ld.consumer in users and ld.library == "cudnn" and ld.soname == f"libcudnn.so.{major}"
    ]
    if not lds:
        return False  # nothing loads this major today (frameworks not yet installed do not count)
    for ld in lds:
        copy = next(
            (
                c
                for c in env.libraries
                if c.library == "cudnn" and c.directory == ld.directory and c.major == major
            ),
            None,
        )
        if copy is None or copy.origin != src:
            return False
        if dist and (copy.package.name if copy.package else "") != dist:
            return (
                False  # another package of the same source: a new install, not the copy loaded now
            )
        pkg_ver = (copy.package.version or "") if copy.package else ""
        if nums(ver) != nums(copy.version) and nums(ver) != nums(pkg_ver):
            return False
    return True


def _cm_of(text: str) -> Optional[int]:
    mm = re.search(r"cu(?:da)?-?(\d{2})", text)
    return int(mm.group(1)) if mm else None


def from_stack(
    env: m.Environment, stack: m.Stack
) -> Tuple[Dict[str, Tuple[m.Build, bool]], Dict[int, Cudnn]]:
    """A Stack as an assignment the checker reads."""
    choices = {c.framework: (c.build, c.action == "keep") for c in stack.choices}
    cudnn: Dict[int, Cudnn] = {}
    for major, ver in stack.cudnn_runtime.items():
        choice = stack.cudnn_copies[major]
        pkg = str(choice.package) if choice.package else ""
        if pkg.startswith("nvidia-cudnn-"):
            cudnn[int(major)] = (ver, _cm_of(pkg), "pip", pkg.split()[0])
        elif pkg.startswith("libcudnn"):
            cudnn[int(major)] = (ver, _cm_of(pkg), "apt", None)
        elif pkg.startswith("cudnn "):
            cudnn[int(major)] = (ver, None, "conda", None)
        else:
            copy = next(
                c
                for c in env.libraries
                if c.directory == choice.directory and c.major == int(major)
            )
            cudnn[int(major)] = (ver, copy.cuda_major, copy.origin, None)
    return choices, cudnn


def cudnn_options(env: m.Environment, recipes: m.Recipes, major: int) -> List[Cudnn]:
    """Every copy of cuDNN `major` that could be the one mapped: the intact copies on disk
    and every pip / apt / conda-forge package of the recipes."""
    out: List[Cudnn] = []
    for c in env.libraries:
        if (
            c.library == "cudnn"
            and c.major == major
            and c.version
            and not c.missing
            and c.origin != "bundled"
        ):
            out.append(
                (
                    c.version,
                    c.cuda_major,
                    c.origin,
                    (c.package.name if c.package else "") if c.origin == "pip" else None,
                )
            )
    for r in recipes.cudnn:
        if nums(r.version)[:1] != (major,):
            continue
        for dist, ver in r.pip.items():
            out.append((ver, _cm_of(dist), "pip", dist))
        for pkg, ver in r.apt.items():
            out.append((r.version, _cm_of(pkg + " " + ver), "apt", None))
        if r.pip:
            for cm in r.cuda_majors:
                out.append((sorted(r.pip.values())[0], cm, "conda", None))
    return out


def brute_force(
    env: m.Environment, intent: m.Intent, recipes: m.Recipes
) -> Optional[Tuple[dict, dict]]:
    """Any valid assignment, by trying them all (small inputs only)."""
    fws = wanted(env, intent)
    per_fw: List[List[Tuple[m.Build, bool]]] = []
    for f in fws:
        opts = [(b, False) for b in recipes.builds_for(f)]
        fb = env.framework(f)
        if fb is not None:
            opts.append(
                (
                    m.Build(
                        f,
                        fb.version,
                        fb.variant or "installed",
                        fb.cuda,
                        fb.cudnn,
                        compute_capabilities=fb.compute_capabilities,
                        ptx=fb.ptx,
                    ),
                    True,
                )
            )
        per_fw.append(opts)
    for combo in itertools.product(*per_fw):
        choices = dict(zip(fws, combo))
        majors = sorted({nums(b.cudnn)[0] for b, _ in combo if b.cuda and b.cudnn})
        for cud in itertools.product(*[cudnn_options(env, recipes, mj) for mj in majors]):
            cudnn = dict(zip(majors, cud))
            if not violations(env, intent, recipes, choices, cudnn):
                return choices, cudnn
    return None
