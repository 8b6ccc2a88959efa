"""diagnose(): Environment + Recipes -> findings, each with its evidence and the fix it implies.

Pure: no I/O. Every number (driver floors, cuDNN's minimum compute capability, GPU compute
capabilities, a build's kernels) comes from `recipes`; the rules themselves (cuDNN
compatibility, runs-on, completeness, display names, the Environment queries it shares with
resolve) live in fixer/rules.py.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from fixer.diagnosis.nogpu import gpu_hint
from fixer.model import (
    FINDING_IDS,
    Build,
    Distribution,
    Environment,
    Finding,
    FrameworkBuild,
    Gpu,
    LibFile,
    LibraryCopy,
    LoadResolution,
    Recipes,
)
from fixer.system.versions import canonical_name, major_minor, version_key

if TYPE_CHECKING:
    pass
from fixer.rules import (
    built_cudnn,
    copy_at,
    cudnn_compatible,
    cudnn_relation,
    display_name as _name,
    driver_cuda,
    foreign_cudnn_preloads,
    lent_cudnn_sublibraries,
    modified_files,
    gpu_compute_capability,
    older_cuda_libraries,
    pick_cuda_variant,
    recipe_build,
    runs_on,
    runs_on_arch_list,
    unloadable_files,
)
from fixer.system import cachefile
from fixer.system.paths import cache_dir, write_cache

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
GPU_PACKAGES = (
    "nvidia-",
    "torch",
    "jax",
    "tensorflow",
    "cupy",
    "onnxruntime-gpu",
    "ctranslate2",
    "paddlepaddle-gpu",
    "tf-keras",
)


def diagnose(env: Environment, recipes: Recipes) -> Tuple[Finding, ...]:
    """Findings sorted by severity (error, warning, info), then by id. Empty: healthy. The
    runtime views of doctor --deep are texts to classify: fixer.explainer.diagnose_all adds them."""
    d = _Diagnosis(env, recipes)
    d.run()
    return ordered(d.findings)


def ordered(findings: Iterable[Finding]) -> Tuple[Finding, ...]:
    """diagnose's order: by severity (error, warning, info), then by id, then by title."""
    return tuple(
        sorted(
            findings, key=lambda f: (SEVERITY_ORDER[f.severity], FINDING_IDS.index(f.id), f.title)
        )
    )


def is_healthy(findings: Sequence[Finding]) -> bool:
    return not any(f.severity in ("error", "warning") for f in findings)


def major_minor_text(version: str) -> str:
    """ "12.6.3" -> "12.6"."""
    return ".".join(str(p) for p in major_minor(version))


class _Diagnosis:
    def __init__(self, env: Environment, recipes: Recipes) -> None:
        self.env = env
        self.recipes = recipes
        self.findings: List[Finding] = []
        self.gpu_fws = [f for f in env.frameworks if f.is_cuda_build]
        self._copy_reported: Set[Tuple[str, str]] = set()

    def add(
        self,
        id: str,
        severity: str,
        title: str,
        evidence: Iterable[str] = (),
        fix: str = "",
        frameworks: Iterable[str] = (),
    ) -> None:
        self.findings.append(
            Finding(
                id=id,  # type: ignore[arg-type]
                severity=severity,  # type: ignore[arg-type]
                title=title,
                evidence=tuple(evidence),
                fix=fix,
                frameworks=tuple(frameworks),
            )
        )

    # ------------------------------------------------------------------ helpers
    def build_row(self, fw: FrameworkBuild) -> Optional[Build]:
        return recipe_build(fw, self.recipes)

    def built_cudnn(self, fw: FrameworkBuild) -> Optional[str]:
        return built_cudnn(fw, self.recipes)

    def gpu_cc(self, g: Gpu) -> Optional[str]:
        return gpu_compute_capability(g, self.recipes)

    def gpu_label(self, g: Gpu) -> str:
        m = (
            None
            if g.source != "sysfs-pci"
            else (self.recipes.gpu_by_pci(g.pci_device_id) if g.pci_device_id else None)
        )
        return m.name if m else g.name

    def copy_at(
        self, directory: Optional[str], library: str = "cudnn", soname: str = ""
    ) -> Optional[LibraryCopy]:
        return copy_at(self.env, directory, library, soname)

    # ------------------------------------------------------------------ rules
    def run(self) -> None:
        env = self.env
        if not env.gpus:
            self.no_gpu()
            if not self.gpu_fws or (
                env.runtime.kind in ("colab", "kaggle")
                and env.runtime.accelerator in ("cpu", "tpu")
                and "CUDA_VISIBLE_DEVICES" not in env.env
            ):
                return
        else:
            if self.driver_missing():
                pass
            else:
                self.driver_too_old()
            self.arch()
            self.cpu_only()
        self.cudnn_loads()
        self.preloaded_sublibraries()
        self.lent_sublibraries()
        self.cudnn_conflict()
        self.unused_copies()
        self.cuda_libs()
        self.modified_copies()
        self.renamed_distributions()
        self.leftovers()
        self.pip_conflicts()

    def no_gpu(self) -> None:
        env = self.env
        cvd = env.env.get("CUDA_VISIBLE_DEVICES")
        hidden = [p.detail for p in env.probes if p.probe == "CUDA_VISIBLE_DEVICES"]
        nvd = [p.detail for p in env.probes if p.probe == "NVIDIA_VISIBLE_DEVICES"]
        cpu_runtime = env.runtime.kind in ("colab", "kaggle") and env.runtime.accelerator in (
            "cpu",
            "tpu",
        )
        if not self.gpu_fws and not hidden:
            return  # nothing needs a GPU: nothing to fix
        if cpu_runtime and not hidden:
            # CUDA builds installed on a CPU/TPU runtime: no GPU stack to repair here, and the
            # user must switch runtimes before any fix can run (exit 3, fixer.diagnosis.nogpu)
            self.add(
                "gpu-missing",
                "error",
                f"No GPU on this {env.runtime.kind} {env.runtime.accelerator.upper()} runtime",  # type: ignore[union-attr]
                [f"runtime: {env.runtime.kind} ({env.runtime.accelerator})"]
                + [f"{_name(f.framework)} {f.version} is a CUDA build" for f in self.gpu_fws],
                gpu_hint(env),
                [f.framework for f in self.gpu_fws],
            )
            return
        evidence = list(hidden) + list(nvd)
        if cvd is not None and not hidden:
            evidence.append(f"CUDA_VISIBLE_DEVICES={cvd!r}")
        evidence += [f"{_name(f.framework)} {f.version} is a CUDA build" for f in self.gpu_fws]
        failed = [
            f"{p.probe}: {p.detail}"
            for p in env.probes
            if not p.ok and p.probe in ("nvml", "nvidia-smi", "sysfs-pci")
        ]
        evidence += failed[:3]
        fix = gpu_hint(env, hidden=bool(hidden), container=bool(nvd))
        self.add(
            "gpu-missing",
            "error",
            "No NVIDIA GPU is visible" + (" (hidden by CUDA_VISIBLE_DEVICES)" if hidden else ""),
            evidence,
            fix,
            [f.framework for f in self.gpu_fws],
        )

    def driver_missing(self) -> bool:
        drv = self.env.driver
        if drv.version is not None and drv.error is None:
            return False
        names = ", ".join(self.gpu_label(g) for g in self.env.gpus)
        ev = [f"GPU(s): {names}"]
        if drv.version:
            ev.append(f"kernel module {drv.version} is loaded")
        if drv.error:
            ev.append(drv.error)
        floors = sorted(
            {self.recipes.min_driver(f.cuda) for f in self.gpu_fws if f.cuda} - {None},
            key=version_key,
        )
        need = f" (>= {floors[-1]} for the installed CUDA builds)" if floors else ""
        fix = (
            f"Install the NVIDIA driver{need}; in a container, start it with --gpus all so libcuda.so.1 is mounted."
            if not drv.version
            else "libcuda.so.1 (the driver's user-space library) is not loadable: install the driver's libraries "
            f"matching kernel module {drv.version}, or mount them into the container (--gpus all)."
        )
        self.add(
            "driver-missing",
            "error",
            f"{names or 'The GPU'} has no usable NVIDIA driver",
            ev,
            fix,
            [f.framework for f in self.gpu_fws],
        )
        return True

    def driver_too_old(self) -> None:
        drv = self.env.driver
        for fw in self.gpu_fws:
            if not fw.cuda:
                continue
            floor = self.recipes.min_driver(fw.cuda)
            cuda_major = version_key(fw.cuda)[0]
            too_old = False
            ev = [f"{_name(fw.framework)} {fw.version} is built for CUDA {fw.cuda}"]
            if floor and drv.version and version_key(drv.version) < version_key(floor):
                too_old = True
                ev.append(f"driver {drv.version} < {floor}, the floor for CUDA {cuda_major}.x")
            if drv.cuda_version and version_key(drv.cuda_version)[0] < cuda_major:
                too_old = True
                ev.append(f"driver {drv.version} supports CUDA up to {drv.cuda_version}")
            if not too_old:
                continue
            alt = self.lower_cuda_builds(fw)
            fix = f"Install NVIDIA driver >= {floor}" if floor else "Upgrade the NVIDIA driver"
            if alt:
                fix += f", or install a {_name(fw.framework)} build for an older CUDA: {alt}"
            self.add(
                "driver-too-old",
                "error",
                f"The NVIDIA driver {drv.version} is too old for {_name(fw.framework)} {fw.version} (CUDA {fw.cuda})",
                ev,
                fix + ".",
                [fw.framework],
            )

    def lower_cuda_builds(self, fw: FrameworkBuild) -> str:
        drv = self.env.driver
        if not drv.version:
            return ""
        public = fw.version.split("+")[0]
        builds = [b for b in self.recipes.builds_for(fw.framework, public) if b.cuda]
        ccs = [cc for cc in (self.gpu_cc(g) for g in self.env.gpus) if cc]
        # the wheel-index rule: the highest CUDA within the driver's, else minor-version compatibility
        pick = pick_cuda_variant(
            [(b.cuda or "", b.compute_capabilities, b.ptx) for b in builds],
            drv.version,
            driver_cuda(drv.version, drv.cuda_version, self.recipes.driver_floors),
            ccs,
            self.recipes.driver_floors,
        )
        b = next(
            (b for b in builds if pick and version_key(b.cuda)[:2] == version_key(pick[0])[:2]),
            None,
        )
        if b is None:
            return ""
        where = f" from {b.index_url}" if b.index_url else ""
        return f"{' '.join(b.packages) or b.framework + '==' + b.version} ({b.variant}{where})"

    def arch(self) -> None:
        for g in self.env.gpus:
            cc = self.gpu_cc(g)
            if not cc:
                continue
            for fw in self.gpu_fws:
                sass, ptx = fw.compute_capabilities, fw.ptx
                tokens = fw.arch_list  # read from the build's own libraries: wins over the recipes
                row = self.build_row(fw)
                if not sass and row is not None:
                    sass, ptx = row.compute_capabilities, row.ptx
                floor = getattr(row, "min_compute_capability", None) if row is not None else None
                if not sass and floor and version_key(cc) < version_key(floor):
                    self.add(
                        "gpu-arch-unsupported",
                        "error",
                        f"{self.gpu_label(g)} (compute capability {cc}) is below what {_name(fw.framework)} {fw.version} supports ({floor})",
                        [
                            f"{_name(fw.framework)} {fw.version} needs compute capability >= {floor}",
                            f"{self.gpu_label(g)}: compute capability {cc}",
                        ],
                        f"Install an older {_name(fw.framework)} release that still supports compute capability {cc}.",
                        [fw.framework],
                    )
                    continue
                if tokens:
                    if runs_on_arch_list(cc, tokens):
                        continue
                    shipped = f"{' '.join(tokens)} (read from {fw.arch_source})"
                elif not sass or runs_on(cc, sass, ptx):
                    continue
                else:
                    shipped = ", ".join(sass) + (f" (+PTX {ptx})" if ptx else "") + " (recipes)"
                alt = self.builds_for_cc(fw, cc)
                self.add(
                    "gpu-arch-unsupported",
                    "error",
                    f"{self.gpu_label(g)} (compute capability {cc}) is not supported by {_name(fw.framework)} {fw.version}",
                    [
                        f"{_name(fw.framework)} {fw.version} ships kernels for {shipped}",
                        f"{self.gpu_label(g)}: compute capability {cc}",
                    ],
                    (
                        f"Install a build that ships sm_{cc.replace('.', '')} kernels: {alt}."
                        if alt
                        else f"Install a {_name(fw.framework)} build whose kernels include compute capability {cc} "
                        "(older CUDA variants such as cu126 cover 5.0-9.0)."
                    ),
                    [fw.framework],
                )

    def builds_for_cc(self, fw: FrameworkBuild, cc: str) -> str:
        public = fw.version.split("+")[0]
        for b in self.recipes.builds_for(fw.framework, public) + self.recipes.builds_for(
            fw.framework
        ):
            if b.compute_capabilities and runs_on(cc, b.compute_capabilities, b.ptx):
                where = f" from {b.index_url}" if b.index_url else ""
                return f"{' '.join(b.packages) or fw.framework + '==' + b.version} ({b.variant}{where})"
        return ""

    def cpu_only(self) -> None:
        for fw in self.env.frameworks:
            if fw.is_cuda_build is False and fw.framework in (
                "torch",
                "tensorflow",
                "jax",
                "paddle",
            ):
                fix = {
                    "torch": "Reinstall a CUDA build: pip install --force-reinstall torch (PyPI's Linux wheel is a CUDA build) "
                    "or from https://download.pytorch.org/whl/cu126",
                    "tensorflow": "pip install 'tensorflow[and-cuda]'",
                    "jax": "pip install 'jax[cuda13]' (or jax[cuda12]) to add the CUDA plugin",
                    "paddle": "Install paddlepaddle-gpu",
                }[fw.framework]
                self.add(
                    "cpu-only-build",
                    "warning",
                    f"{_name(fw.framework)} {fw.version} is a CPU-only build on a machine with a GPU",
                    [
                        f"{fw.distribution} {fw.version} ({fw.variant or 'no CUDA'}; {fw.source})",
                        f"GPU: {', '.join(self.gpu_label(g) for g in self.env.gpus)}",
                    ],
                    fix + ".",
                    [fw.framework],
                )

    # ------------------------------------------------------------------ cuDNN
    def cudnn_loads(self) -> None:
        for res in self.env.loads:
            if res.library != "cudnn" or res.consumer == "dlopen":
                continue
            fw = self.env.framework(res.consumer)
            if fw is not None:
                self.cudnn_load(res, fw)

    def cudnn_load(self, res: LoadResolution, fw: FrameworkBuild) -> None:
        """The findings of one framework's libcudnn.so.N: not found, broken, shadowed, of another
        major or an older minor, built for another CUDA, then its copy's and its kernels'."""
        built = self.built_cudnn(fw)
        name = _name(fw.framework)
        fix_pkg = self.reinstall_hint(fw, built)
        if res.path is None:
            want = (
                f"cuDNN >= {built} (major {built.split('.')[0]})"
                if built and "." in built
                else f"cuDNN {res.soname}"
            )
            self.add(
                "cudnn-missing",
                "error",
                f"{name} {fw.version} cannot find {res.soname}",
                [f"{name} needs {want}", *res.steps],
                fix_pkg,
                [fw.framework],
            )
            return
        if res.error:
            self.load_error(res, fw, fix_pkg)
            return
        where = f"{res.path} (via {res.via})"
        if res.intended:
            self.add(
                "cudnn-shadowed",
                "warning" if cudnn_compatible(res.version, built) is not False else "error",
                f"{res.via} puts another cuDNN ahead of the one {name} points at",
                [
                    f"loads {where}" + (f", cuDNN {res.version}" if res.version else ""),
                    f"intended: {res.intended}",
                    *res.steps,
                ],
                f"Remove {res.directory} from {res.via} (or unset {res.via}) so {name} loads {os.path.dirname(res.intended)}.",
                [fw.framework],
            )
        self.version_relation(res, fw, built, where, fix_pkg)
        copy = self.copy_at(res.directory, soname=res.soname)
        self.copy_cuda_major(res, fw, copy, where, fix_pkg)
        self.copy_findings(copy, [fw.framework], loaded=True)
        self.cudnn_arch(res, fw)

    def load_error(self, res: LoadResolution, fw: FrameworkBuild, fix_pkg: str) -> None:
        """A libcudnn.so.N found but not loadable: on LD_LIBRARY_PATH/LD_PRELOAD it shadows the
        framework's own copy; elsewhere the copy itself is broken."""
        name = _name(fw.framework)
        if res.via in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
            self.add(
                "cudnn-shadowed",
                "error",
                f"A broken {res.soname} on {res.via} is found first by {name}",
                [res.error or "", *res.steps],
                f"Remove {res.directory} from {res.via} (or the broken file).",
                [fw.framework],
            )
        else:
            self.add(
                "cudnn-incomplete",
                "error",
                f"The {res.soname} {name} loads is not a usable library",
                [res.error or ""],
                fix_pkg,
                [fw.framework],
            )

    def version_relation(
        self,
        res: LoadResolution,
        fw: FrameworkBuild,
        built: Optional[str],
        where: str,
        fix_pkg: str,
    ) -> None:
        """cudnn-major-mismatch or cudnn-too-old when the loaded cuDNN fails the build's rule
        (rules.cudnn_relation: COMPAT_RULES)."""
        relation = cudnn_relation(res.version, built)
        if relation in (None, "ok") or not built:
            return
        name = _name(fw.framework)
        built_line = f"built with cuDNN {built}" + (
            f" ({fw.cudnn_requirement})" if fw.cudnn_requirement else ""
        )
        if relation == "other-major":
            self.add(
                "cudnn-major-mismatch",
                "error",
                f"{name} {fw.version} was built with cuDNN {built} but loads cuDNN {res.version}",
                [f"loads {where}", built_line],
                fix_pkg,
                [fw.framework],
            )
            return
        self.add(
            "cudnn-too-old",
            "error",
            f"{name} {fw.version} needs cuDNN >= {_short(built)} but loads {res.version}",
            [f"loads {where}", built_line, *[f"not chosen: {s}" for s in res.shadowed[:3]]],
            fix_pkg,
            [fw.framework],
        )

    def copy_cuda_major(
        self,
        res: LoadResolution,
        fw: FrameworkBuild,
        copy: Optional[LibraryCopy],
        where: str,
        fix_pkg: str,
    ) -> None:
        """A loaded cuDNN copy built for another CUDA major than the framework."""
        fw_cuda = version_key(fw.cuda)[0] if fw.cuda else None
        if (
            copy is None
            or not copy.cuda_major
            or not fw_cuda
            or copy.cuda_major == fw_cuda
            or copy.origin == "bundled"
        ):
            return
        name = _name(fw.framework)
        self.add(
            "cudnn-major-mismatch",
            "error",
            f"{name} {fw.version} (CUDA {fw.cuda}) loads a cuDNN built for CUDA {copy.cuda_major}",
            [
                f"loads {where}"
                + (f", cuDNN {res.version}" if res.version else "")
                + (f" ({copy.package})" if copy.package else ""),
                f"{name} was built with CUDA {fw.cuda}; a cuDNN build needs the CUDA major it was built for",
            ],
            fix_pkg,
            [fw.framework],
        )

    def reinstall_hint(self, fw: FrameworkBuild, built: Optional[str]) -> str:
        req = fw.cudnn_requirement
        if req:
            exact = req.split(",")[0]
            if "==" in exact:
                return (
                    f"Reinstall the cuDNN wheel it pins: pip install --force-reinstall '{exact}'."
                )
            return f"Install a cuDNN wheel it accepts: pip install '{req}'."
        if built:
            return (
                f"Install cuDNN {built.split('.')[0]}.x >= {built} (pip: nvidia-cudnn-cuXX for the build's CUDA major) "
                "and make sure the framework finds it first."
            )
        return "Install the cuDNN this build needs (pip: nvidia-cudnn-cuXX for the build's CUDA major)."

    def copy_findings(self, c: Optional[LibraryCopy], frameworks: List[str], loaded: bool) -> None:
        if c is None:
            return
        key = (c.directory, c.library)
        if key in self._copy_reported:
            for i, f in enumerate(self.findings):  # the same copy: name the extra framework
                if c.directory in " ".join(f.evidence) and f.id in (
                    "cudnn-incomplete",
                    "cudnn-mixed",
                ):
                    self.findings[i] = Finding(
                        f.id,
                        f.severity,
                        f.title,
                        f.evidence,
                        f.fix,
                        tuple(dict.fromkeys(f.frameworks + tuple(frameworks))),
                    )
            return
        self._copy_reported.add(key)
        owner = f" ({c.package})" if c.package else ""
        # a wheel pip lists as installed whose files are broken is a warning even when nothing loads
        # it (pip will not repair it by itself); a stray or apt copy nothing loads is a note
        sev = "error" if loaded else ("warning" if c.origin == "pip" and c.package else "info")
        bad = unloadable_files(c)
        if c.missing or bad:
            if c.files:
                title = f"cuDNN {c.version or ''} in {c.directory} is incomplete".replace("  ", " ")
            else:
                title = f"{c.package or 'cuDNN'} is installed but its libraries are gone from {c.directory}"
            ev = [f"{c.directory}{owner}"]
            if c.missing:
                ev.append(
                    "missing: "
                    + (
                        f"all {len(c.missing)} libraries ({c.missing[0]}, ...)"
                        if not c.files
                        else ", ".join(c.missing)
                    )
                )
            if bad:
                ev.append("not loadable (truncated or not ELF): " + ", ".join(bad))
            if loaded:
                ev.append(
                    "a missing engine library makes convolutions fail ('unable to find an engine') "
                    "or silently return wrong numbers"
                )
            fix = (
                f"Reinstall it: pip install --force-reinstall '{c.package.requirement}'."
                if c.origin == "pip" and c.package
                else f"Reinstall the package that owns it ({c.package})."
                if c.package
                else f"Restore the missing files or remove {c.directory} from the search path."
            )
            self.add("cudnn-incomplete", sev, title, ev, fix, frameworks)
        if c.mixed:
            expected, odd, rest = mixed_files(c)
            odd_words = ", ".join(f"{f.name} is {f.version}" for f in odd)
            self.add(
                "cudnn-mixed",
                sev,
                f"cuDNN sub-libraries of different versions in {c.directory}: {odd_words}, "
                f"the rest {expected}",
                [
                    *(
                        f"{f.name}: cuDNN {f.version}, not {expected} like the rest of the copy"
                        for f in odd
                    ),
                    f"{c.directory}{owner}",
                    f"the other {len(rest)} files: cuDNN {expected} ({', '.join(f.name for f in rest)})",
                ],
                (
                    f"Reinstall the copy so all files come from one release: pip install --force-reinstall "
                    f"'{c.package.requirement}'."
                    if c.origin == "pip" and c.package
                    else "Reinstall one cuDNN release so every libcudnn_*.so file has the same version."
                ),
                frameworks,
            )

    def modified_copies(self) -> None:
        """files-modified: a wheel's library files that differ from its RECORD (another release's
        file under the same name, a damaged one). Its fix is a reinstall of the same version."""
        for c in self.env.libraries:
            names = modified_files(c)
            if not names or c.package is None:
                continue
            users = sorted(
                {
                    ld.consumer
                    for ld in self.env.loads
                    if ld.consumer != "dlopen"
                    and ld.directory
                    and os.path.normpath(ld.directory) == os.path.normpath(c.directory)
                }
            )
            own = ".".join(str(x) for x in version_key(c.package.version)[:3])
            ev = [
                f"{f.name}: {f.differs}"
                + (
                    f"; it is cuDNN {f.version}, not {own}"
                    if c.library == "cudnn" and f.version and f.version != own
                    else ""
                )
                for f in c.files
                if f.differs
            ]
            # which release each foreign file looks like (cudnnGetVersion, or the same bytes as
            # another copy's file: fixer.detection.libraries.name_foreign_files)
            looks = {
                f.name: f" (cuDNN {f.version})"
                for f in c.files
                if f.differs and c.library == "cudnn" and f.version and f.version != own
            }
            self.add(
                "files-modified",
                "error" if users else "warning",
                f"{len(names)} file(s) of {c.package} in {c.directory} are not the ones its "
                f"RECORD lists: {', '.join(n + looks.get(n, '') for n in names)}",
                [*ev, f"{c.directory} ({c.package})"],
                f"Reinstall the same version: pip install --force-reinstall --no-deps "
                f"'{c.package.requirement}'.",
                users,
            )

    def renamed_distributions(self) -> None:
        """files-modified: a distribution whose dist-info folder is named for another version than
        its METADATA says (Distribution.named_version). Its METADATA is not the file its RECORD
        lists, and the two installers disagree about what is installed: pip reads METADATA, uv
        the folder's name (fixer.system.versions.installer_skips). The files are the ones the
        installer wrote under that name: the fix reinstalls that version."""
        if self.env.python is None:
            return
        for d in self.env.python.distributions:
            if not d.named_version:
                continue
            req = f"{d.name}=={d.named_version}"
            self.add(
                "files-modified",
                "warning",
                f"{d.name}: METADATA says {d.version} but its dist-info folder is named for "
                f"{d.named_version}",
                [
                    f"{d.location}: {d.name}-{d.named_version}.dist-info, METADATA Version: "
                    f"{d.version}",
                    f"pip takes {d.name} as {d.version}, uv as {d.named_version}",
                ],
                f"Reinstall the version the folder names: pip install --force-reinstall --no-deps "
                f"'{req}'.",
            )

    def leftovers(self) -> None:
        """pip-leftovers: entries pip moved aside ("~...") while it uninstalled, left by a run that
        was interrupted; pip warns "Ignoring invalid distribution" about them on every run."""
        left = self.env.pip_leftovers
        if not left:
            return
        self.add(
            "pip-leftovers",
            "warning",
            f"{len(left)} entr{'y' if len(left) == 1 else 'ies'} an interrupted pip run moved "
            "aside remain in site-packages",
            list(left),
            "Remove them (apply does, journalled; rollback puts them back). pip names what it "
            "moves aside '~' + the original name's tail (pip's AdjacentTempDirectory).",
        )

    def cudnn_arch(self, res: LoadResolution, fw: FrameworkBuild) -> None:
        if not res.version:
            return
        need = None
        for r in self.recipes.cudnn:
            if (
                r.min_compute_capability
                and version_key(r.version)[:3] <= version_key(res.version)[:3]
            ):
                if need is None or version_key(r.min_compute_capability) > version_key(need):
                    need = r.min_compute_capability
        if need is None:
            return
        for g in self.env.gpus:
            cc = self.gpu_cc(g)
            if cc and version_key(cc) < version_key(need):
                self.add(
                    "gpu-arch-unsupported",
                    "error",
                    f"cuDNN {res.version} needs compute capability >= {need}; {self.gpu_label(g)} has {cc}",
                    [
                        f"{_name(fw.framework)} loads {res.path}",
                        f"{self.gpu_label(g)}: compute capability {cc}",
                    ],
                    "Use cuDNN 9.10 or older with this GPU: a CUDA 12 build (e.g. torch from the cu126 index, "
                    "which pins nvidia-cudnn-cu12==9.10.2.21).",
                    [fw.framework],
                )

    def preloaded_sublibraries(self) -> None:
        for path, copy, mixes in foreign_cudnn_preloads(self.env):
            version = copy.version if copy and copy.version else "version unknown"
            loads = sorted({f"cuDNN {ld.version or '?'} from {ld.directory}" for ld in mixes})
            self.add(
                "cudnn-mixed",
                "error",
                f"LD_PRELOAD forces {os.path.basename(path)} ({version}) from {os.path.dirname(path)} into every "
                f"process, next to the {' and '.join(loads)} that {', '.join(sorted({_name(ld.consumer) for ld in mixes}))} load",
                [
                    f"LD_PRELOAD={self.env.env.get('LD_PRELOAD', '')}",
                    *(
                        f"{_name(ld.consumer)} loads {ld.path} (cuDNN {ld.version or '?'}, via {ld.via})"
                        for ld in mixes
                    ),
                    "cuDNN then borrows that sub-library instead of its own: its version check fails, or it runs "
                    "on mixed code",
                ],
                f"Remove {path} from LD_PRELOAD; `colab-cudnn-fix apply` writes that fix for new shells.",
                sorted({ld.consumer for ld in mixes}),
            )

    def lent_sublibraries(self) -> None:
        for lender, subs, mixes in lent_cudnn_sublibraries(self.env):
            version = lender.version or "version unknown"
            loads = sorted({f"cuDNN {ld.version or '?'} from {ld.directory}" for ld in mixes})
            self.add(
                "cudnn-mixed",
                "error",
                f"LD_LIBRARY_PATH lends {', '.join(subs)} ({version}) from {lender.directory} to the "
                f"{' and '.join(loads)} that {', '.join(sorted({_name(ld.consumer) for ld in mixes}))} load",
                [
                    f"{lender.directory}: {', '.join(subs)} (cuDNN {version}), on LD_LIBRARY_PATH",
                    *(
                        f"{_name(ld.consumer)} loads {ld.path} (cuDNN {ld.version or '?'}, via {ld.via})"
                        for ld in mixes
                    ),
                    "libcudnn.so dlopens its sub-libraries by name, and LD_LIBRARY_PATH is searched before its "
                    "own folder (DT_RUNPATH): it runs on mixed code or fails its version check",
                ],
                f"Remove {lender.directory} from LD_LIBRARY_PATH; `colab-cudnn-fix apply` writes that fix "
                "for new shells (and preloads the intended copy in notebooks).",
                sorted({ld.consumer for ld in mixes}),
            )

    def cudnn_conflict(self) -> None:
        by_soname: Dict[str, List[LoadResolution]] = {}
        for res in self.env.loads:
            if res.library == "cudnn" and res.consumer != "dlopen" and res.path and not res.error:
                by_soname.setdefault(res.soname, []).append(res)
        for soname, group in by_soname.items():
            paths = {os.path.normpath(r.path or "") for r in group}
            if len(paths) < 2:
                continue
            builds = {
                r.consumer: self.built_cudnn(self.env.framework(r.consumer))  # type: ignore[arg-type]
                for r in group
                if self.env.framework(r.consumer)
            }
            bad = []
            for r in group:
                for consumer, built in builds.items():
                    if cudnn_compatible(r.version, built) is False:
                        bad.append(
                            f"if {_name(r.consumer)} loads first, {_name(consumer)} gets cuDNN {r.version} < {built}"
                        )
            # the odd one out first: the copy fewer frameworks load (then the older one)
            count: Dict[str, int] = {}
            for r in group:
                count[os.path.normpath(r.path or "")] = (
                    count.get(os.path.normpath(r.path or ""), 0) + 1
                )
            group = sorted(
                group, key=lambda r: (count[os.path.normpath(r.path or "")], version_key(r.version))
            )
            ev = [
                f"{_name(r.consumer)} loads {r.path} (cuDNN {r.version or '?'}, via {r.via})"
                for r in group
            ]
            self.add(
                "cudnn-conflict",
                "warning" if bad else "info",
                f"Frameworks load different copies of {soname}; in one process the first import wins",
                ev + bad,
                "Make them use one copy: install one nvidia-cudnn wheel new enough for all of them, "
                "and remove other cuDNN directories from LD_LIBRARY_PATH.",
                [r.consumer for r in group],
            )

    def unused_copies(self) -> None:
        for c in self.env.libraries:
            if c.library == "cudnn":
                self.copy_findings(c, [], loaded=False)

    def cuda_libs(self) -> None:
        for res in self.env.loads:
            if res.library == "cudnn" or res.consumer == "dlopen" or (res.path and not res.error):
                continue
            fw = self.env.framework(res.consumer)
            version = fw.version if fw else ""
            self.add(
                "cuda-lib-missing",
                "error",
                f"{_name(res.consumer)} {version} cannot load {res.soname}",
                [res.error or "not found", *res.steps],
                f"Install the CUDA {res.soname.rsplit('.', 1)[-1]} runtime wheels the build needs "
                f"(pip install --force-reinstall {fw.distribution if fw else res.consumer}=={version.split('+')[0] if version else ''} "
                "pulls them in), or point LD_LIBRARY_PATH at a CUDA toolkit of that major.",
                [res.consumer],
            )
        older: Dict[Tuple[str, str], List[LoadResolution]] = {}
        for res in older_cuda_libraries(self.env):
            older.setdefault((res.consumer, res.directory or ""), []).append(res)
        for (consumer, directory), group in older.items():
            self.cuda_lib_mismatch(consumer, directory, group)

    def cuda_lib_mismatch(
        self, consumer: str, directory: str, group: Sequence[LoadResolution]
    ) -> None:
        """Typically an older CUDA toolkit on LD_LIBRARY_PATH shadowing the framework's own
        pip copies (a RUNPATH consumer), or the pip copies gone and the system's older ones found."""
        fw = self.env.framework(consumer)
        assert fw is not None and fw.cuda
        built = major_minor_text(fw.cuda)
        libs = ", ".join(f"{r.library} {r.version}" for r in group)
        evidence = [f"{_name(consumer)} {fw.version} was built with CUDA {fw.cuda}"]
        evidence += [
            f"it loads {r.path} ({r.library} {r.version}, via {r.via})"
            + (f"; its own copy {r.intended} loses" if r.intended else "")
            for r in group
        ]
        first = group[0]
        if all(r.intended for r in group):
            where = "LD_PRELOAD" if first.via == "LD_PRELOAD" else "LD_LIBRARY_PATH"
            fix = (
                f"Remove {directory} from {where} so {_name(consumer)} loads its own CUDA libraries; "
                "`colab-cudnn-fix apply` writes that fix (and, in a notebook, preloads the right copies in new kernels)."
            )
        else:
            evidence.extend(first.steps)
            fix = (
                f"Install the CUDA {built} runtime wheels {_name(consumer)} needs (pip install --force-reinstall "
                f"{fw.distribution}=={fw.version.split('+')[0]} pulls them in), or put a CUDA >= {built} toolkit "
                f"ahead of {directory}."
            )
        self.add(
            "cuda-lib-mismatch",
            "error",
            f"{_name(consumer)} loads {libs} from {directory}, older than the CUDA {built} it was built with",
            evidence,
            fix,
            [consumer],
        )

    def pip_conflicts(self) -> None:
        py = self.env.python
        if py is None:
            return
        for r in pip_conflict_records(py.distributions, py.markers):
            served = (
                self.cudnn_served_elsewhere(str(r["dist"]), str(r["name"]))
                if r["have"] is None
                else None
            )
            if served:
                self.add(
                    "pip-conflict",
                    "info",
                    f"{r['dist']} {r['dist_version']} requires {r['req']}, which is not "
                    "installed; its cuDNN comes from another copy",
                    [f"{r['dist']} {r['dist_version']}: Requires-Dist {r['line']}", served],
                    "Nothing to do at run time; pip check will still complain.",
                    [],
                )
                continue
            if r["have"] is None:
                self.add(
                    "pip-conflict",
                    "warning",
                    f"{r['dist']} {r['dist_version']} requires {r['req']}, which is not installed",
                    [f"{r['dist']} {r['dist_version']}: Requires-Dist {r['line']}"],
                    f"pip install '{r['req_name']}{r['spec']}'.",
                    [],
                )
                continue
            safe = r["safe"]
            self.add(
                "pip-conflict",
                "info" if safe else "warning",
                f"{r['dist']} {r['dist_version']} requires {r['req_name']}{r['spec']} but {r['have']} is installed",
                [
                    f"{r['dist']} {r['dist_version']}: Requires-Dist {r['line']}",
                    f"installed: {r['name']} {r['have']}",
                ]
                + (
                    [
                        "a newer cuDNN minor of the same major is safe at run time; pip check will still complain"
                    ]
                    if safe
                    else []
                ),
                "Nothing to do at run time."
                if safe
                else f"pip install '{r['req_name']}{r['spec']}' "
                f"(or change {r['dist']} to a version that accepts {r['have']}).",
                [],
            )

    def cudnn_served_elsewhere(self, dist: str, required: str) -> Optional[str]:
        """When `dist` (a framework's distribution) requires the cuDNN wheel `required` that is not
        installed, but the framework loads a cuDNN copy (apt, conda, ...) that meets its build:
        that load, in words (--cudnn-from apt removes the wheel on purpose)."""
        if not required.startswith("nvidia-cudnn"):
            return None
        fw = next((f for f in self.env.frameworks if f.distribution == dist), None)
        if fw is None:
            return None
        loads = [
            ld for ld in self.env.loads if ld.consumer == fw.framework and ld.library == "cudnn"
        ]
        if not loads or any(
            ld.error or not ld.path or cudnn_compatible(ld.version, self.built_cudnn(fw)) is False
            for ld in loads
        ):
            return None
        return "; ".join(
            f"{_name(fw.framework)} loads {ld.path} (cuDNN {ld.version or '?'})" for ld in loads
        )


def _short(v: str) -> str:
    return ".".join(v.split(".")[:2])


def mixed_files(c: LibraryCopy) -> Tuple[str, List[LibFile], List[LibFile]]:
    """A copy whose files are of several releases: (the copy's own version, the files of
    another version, the files of its own). Its own version is its package's (the wheel or apt
    package that put it there), else the one most of its files have."""
    from collections import Counter

    known = [f for f in c.files if f.version]
    expected = None
    if c.package and c.package.version:
        pkg_v = ".".join(str(x) for x in version_key(c.package.version)[:3])
        if any(f.version == pkg_v for f in known):
            expected = pkg_v
    if expected is None:
        expected = (
            Counter(f.version for f in known).most_common(1)[0][0] if known else (c.version or "?")
        )
    odd = [f for f in known if f.version != expected]
    rest = [f for f in known if f.version == expected]
    return expected or "?", odd, rest


def pip_conflict_records(
    distributions: Sequence[Distribution], markers: Dict[str, str]
) -> List[Dict[str, object]]:
    """`pip check` restricted to the GPU packages: each Requires-Dist among them that the
    installed versions break, as plain records. The answer depends only on those distributions
    (names, versions, Requires-Dist) and the markers, so it is cached on disk under that key:
    packaging's requirement and marker parsers cost 40-65 ms to import on the GPU machine, more
    than the whole rest of the diagnosis. The cache is read as untrusted data
    (fixer.system.cachefile: our own private file, else none), and each record must be one
    these distributions could have produced (`_cached_records_ok`), else it is computed again."""
    import json

    gpu = sorted(
        (d.name, d.version, tuple(d.requires))
        for d in distributions
        if d.name.startswith(GPU_PACKAGES)
    )
    path = (
        cache_dir()
        / "pip-check"
        / f"{cachefile.digest([gpu, sorted(markers.items())], (__file__,))}.json"
    )
    cached = cachefile.read_json(path)
    if isinstance(cached, list) and _cached_records_ok(cached, distributions):
        return cached
    records = _pip_conflict_records(distributions, markers)
    write_cache(path, json.dumps(records).encode())  # best effort: a read-only home means no cache
    return records


#: A pip-check record's keys and the types of their values (what _pip_conflict_records writes).
_RECORD_TYPES: Dict[str, "type | Tuple[type, ...]"] = {
    "dist": str,
    "dist_version": str,
    "line": str,
    "req": str,
    "req_name": str,
    "spec": str,
    "name": str,
    "have": (str, type(None)),
    "safe": bool,
}
#: A specifier as packaging prints it (str(SpecifierSet)): clauses joined by "," without spaces.
_SPEC = re.compile(r"(?:(?:===|==|!=|<=|>=|~=|<|>)[A-Za-z0-9.*+!_-]+(?:,|$))*")


def _cached_records_ok(records: List[object], distributions: Sequence[Distribution]) -> bool:
    """Each cached pip-check record is one these distributions could have produced: of the
    written shape, its line a Requires-Dist of the GPU distribution it names, its requirement
    named as that line names it, its specifier in packaging's printed grammar, the installed
    version the one installed now, and its "safe" verdict the rule's (`_safe_pin`). What a
    doctor prints from it (a `pip install` fix among others) can then only be what the
    distributions themselves say."""
    installed = {d.name: d.version for d in distributions}
    lines = {(d.name, d.version, line) for d in distributions for line in d.requires}
    return all(_cached_record_ok(r, installed, lines) for r in records)


def _cached_record_ok(
    r: object, installed: Dict[str, str], lines: Set[Tuple[str, str, str]]
) -> bool:
    if not isinstance(r, dict) or set(r) != set(_RECORD_TYPES):
        return False
    if not all(isinstance(r[k], t) for k, t in _RECORD_TYPES.items()):
        return False
    line, req_name, spec, name = str(r["line"]), str(r["req_name"]), str(r["spec"]), str(r["name"])
    return (
        (r["dist"], r["dist_version"], line) in lines
        and str(r["dist"]).startswith(GPU_PACKAGES)
        and line.lstrip().startswith(req_name)
        and canonical_name(req_name) == name
        and name.startswith(GPU_PACKAGES)
        and _SPEC.fullmatch(spec) is not None
        and all(c.lstrip("=!<>~") in line for c in _clauses(spec))
        and _req_of_line(str(r["req"]), req_name, spec, line)
        and r["have"] == installed.get(name)
        and (r["have"] is None or r["safe"] == _safe_pin(name, spec, str(r["have"])))
        and (r["have"] is not None or r["safe"] is False)
    )


def _clauses(spec: str) -> List[str]:
    """A printed specifier's clauses: "<10.0,>=9.12.0.46" -> ["<10.0", ">=9.12.0.46"]."""
    return [c for c in spec.split(",") if c]


def _req_of_line(req: str, req_name: str, spec: str, line: str) -> bool:
    """`req` is str(Requirement(line)): the name, its extras and specifier as packaging prints
    them, then "; " and the line's own marker (quotes and spaces normalised)."""
    head, sep, marker = req.partition("; ")
    squeeze = str.maketrans({" ": None, "'": '"'})
    return re.fullmatch(
        re.escape(req_name) + r"(\[[A-Za-z0-9._,-]+\])?" + re.escape(spec), head
    ) is not None and (
        not sep or (bool(marker) and marker.translate(squeeze) in line.translate(squeeze))
    )


def _safe_pin(name: str, spec: str, have: str) -> bool:
    """A cuDNN wheel above the exact pins of the same major: safe at run time (cuDNN keeps
    its ABI within a major; compat.md)."""
    clauses = _clauses(spec)
    return (
        name.startswith("nvidia-cudnn")
        and all(c.startswith("==") and not c.startswith("===") for c in clauses)
        and any(
            version_key(have)[0] == version_key(c[2:])[0] and version_key(have) > version_key(c[2:])
            for c in clauses
        )
    )


def _pip_conflict_records(
    distributions: Sequence[Distribution], markers: Dict[str, str]
) -> List[Dict[str, object]]:
    from packaging.markers import InvalidMarker, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    installed = {d.name: d.version for d in distributions}
    env_markers = dict(markers)
    env_markers.setdefault("extra", "")
    out: List[Dict[str, object]] = []
    for d in distributions:
        if not d.name.startswith(GPU_PACKAGES):
            continue
        for line in d.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            name = canonicalize_name(req.name)
            if not name.startswith(GPU_PACKAGES):
                continue
            try:
                if req.marker is not None and not req.marker.evaluate(env_markers):
                    continue
            except (InvalidMarker, UndefinedEnvironmentName, Exception):  # noqa: BLE001 - unknown marker: skip
                continue
            have = installed.get(name)
            record: Dict[str, object] = {
                "dist": d.name,
                "dist_version": d.version,
                "line": line,
                "req": str(req),
                "req_name": req.name,
                "spec": str(req.specifier),
                "name": name,
                "have": have,
                "safe": False,
            }
            if have is None:
                out.append(record)
                continue
            try:
                if req.specifier.contains(Version(have), prereleases=True):
                    continue
            except InvalidVersion:
                continue
            record["safe"] = _safe_pin(name, str(req.specifier), have)
            out.append(record)
    return out
