"""Round fifteen (a)'s readings, each from the code or the documentation that gives the message.

- A Windows error NUMBER decides how a DLL failed to load, whatever language the text around it
  is in (CPython's OSError prints "[WinError N] <FormatMessage text>"; torch's
  _load_dll_libraries appends ' Error loading "<dll>" or one of its dependencies.'): 127
  ERROR_PROC_NOT_FOUND is the family's version-mismatch kind (the DLL was found, an import of it
  lacks a procedure), 193 ERROR_BAD_EXE_FORMAT its damaged kind, 126 ERROR_MOD_NOT_FOUND (and
  the wrapper without a number) its missing kind.
- The Windows loader's own "The procedure entry point X could not be located in the dynamic link
  library Y" (STATUS_ENTRYPOINT_NOT_FOUND) and "The ordinal N could not be located ..."
  (STATUS_ORDINAL_NOT_FOUND): the symbol's family decides, else the library's.
- 127 (or ld.so's undefined symbol) on a file of torch's own cuDNN copy (torch/lib: one release):
  its import was bound to another release's file already loaded in the process (Windows'
  loaded-module list, ld.so's loaded sonames), i.e. by a second cuDNN user: cudnn-conflict.
- ld.so's and dlopen's messages pasted slightly damaged: a line wrapped inside a token (a name,
  a version node) by a terminal or a renderer reads as the whole line; glibc's dlerror with the
  colon after the name lost ("libX.so.N cannot open shared object file") reads as dlerror.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from typing import List

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixer.explainer.catalogue import Family
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids
from tests.unit.explain.test_catalogue import (
    _COLAB_TEXT,
    _SYM_TAIL,
    CAT,
    FAMILIES,
    WIN_FAMILIES,
    _symbol_prefix,
    dirs,
    dll_of,
    library_of,
    loader_text,
    small,
)

WIN_DIRS = st.sampled_from(
    [
        r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin",
        r"C:\Program Files\NVIDIA\CUDNN\v9.1\bin",
        r"D:\Python3\lib\site-packages\ctranslate2",
    ]
)
#: FormatMessage's text of each number in some of the user's languages (the number decides)
TEXTS = {
    126: [
        "The specified module could not be found.",
        "找不到指定的模块。",
        "Das angegebene Modul wurde nicht gefunden.",
        "Impossibile trovare il modulo specificato.",
    ],
    127: [
        "The specified procedure could not be found.",
        "找不到指定的程序。",
        "Die angegebene Prozedur wurde nicht gefunden.",
        "Impossibile trovare la procedura specificata.",
    ],
    193: ["%1 is not a valid Win32 application.", "%1 不是有效的 Win32 应用程序。"],
}
NOISE = st.sampled_from(
    [
        "",
        'Traceback (most recent call last):\n  File "demo.py", line 3, in <module>\n    import torch\n',
        "Epoch 1/10\n",
    ]
)


def _expected(fam: Family, code: int) -> str:
    return {126: fam.missing, 127: fam.mismatch, 193: fam.damaged}[code] or ""


@settings(max_examples=examples(30), deadline=None)
@given(st.data(), st.sampled_from(WIN_FAMILIES), st.sampled_from([126, 127, 193]), NOISE, WIN_DIRS)
def test_the_windows_error_number_decides(
    data: st.DataObject, fam: Family, code: int, noise: str, where: str
) -> None:
    # torch imported beside a DLL in ctranslate2's folder names two GPU frameworks: then the
    # cuDNN copies the paste shows decide (cudnn-conflict, fixer/explainer/copies.conflict;
    # test_copies.py), not the number (found by CI's full run: 126 read cudnn-conflict there)
    assume(not ("import torch" in noise and "ctranslate2" in where))
    dll = data.draw(dll_of(fam))
    words = data.draw(st.sampled_from(TEXTS[code]))
    torch = f'OSError: [WinError {code}] {words} Error loading "{where}\\{dll}" or one of its dependencies.'
    ort = f'LoadLibrary failed with error {code} "{words}" when trying to load "{where}\\{dll}"'
    for text in (torch, ort):
        assert _ids(noise + text)[:1] == [_expected(fam, code)], text
    # the wrapper without a number keeps its own reading: the file could not be loaded
    bare = f'OSError: Error loading "{where}\\{dll}" or one of its dependencies.'
    assert _ids(noise + bare)[:1] == [fam.missing]


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from([1114, 5]), st.sampled_from(WIN_FAMILIES), st.data())
def test_other_numbers_keep_the_wrappers_reading(
    code: int, fam: Family, data: st.DataObject
) -> None:
    # ERROR_DLL_INIT_FAILED and the rest name no failure of the family's files: unchanged
    # (1455, ERROR_COMMITMENT_LIMIT, reads the host's memory since round twenty-seven:
    # test_emitters_round27.test_windows_page_file_too_small_is_the_hosts_memory)
    dll = data.draw(dll_of(fam))
    text = f'OSError: [WinError {code}] x. Error loading "C:\\t\\lib\\{dll}" or one of its dependencies.'
    assert _ids(text)[:1] == [fam.missing]


@settings(max_examples=examples(30), deadline=None)
@given(st.data(), st.sampled_from([f for f in FAMILIES if f.symbols]), NOISE, st.booleans())
def test_the_windows_loaders_entry_point_wording(
    data: st.DataObject, fam: Family, noise: str, ordinal: bool
) -> None:
    # the symbol's family decides, whichever library the dialog names (Windows 8 and later may
    # name the importing module)
    sym = _symbol_prefix(fam) + data.draw(_SYM_TAIL)
    host = data.draw(st.sampled_from(["nvcuda.dll", "app.exe", r"C:\t\torch\lib\torch_cuda.dll"]))
    text = f"{noise}The procedure entry point {sym} could not be located in the dynamic link library {host}"
    assert _ids(text)[:1] == [fam.mismatch], text
    # neighbours: the same dialog for a system DLL or a program of no GPU family reads nothing
    for other in ("DecodePointer", "?expected_function@@YAXXZ"):
        for dll in ("KERNEL32.DLL", r"c:\local\bin\MissingSymbol.exe"):
            plain = f"The procedure entry point {other} could not be located in the dynamic link library {dll}"
            assert _ids(noise + plain)[:1] != [fam.mismatch]
    if ordinal and fam in WIN_FAMILIES:
        dll = data.draw(dll_of(fam))
        n = data.draw(small)
        text = f"The ordinal {n} could not be located in the dynamic link library C:\\x\\{dll}."
        assert _ids(text)[:1] == [fam.mismatch], text


#: every ld.so / dlopen wording of the catalogue with a template (the loader tables)
LOADER_TEMPLATES = [(lr, t) for lr in CAT.loaders for t in lr.templates]


def _token_columns(text: str) -> List[int]:
    """Where a renderer may break a line inside a token: between two non-space characters."""
    return [i for i in range(1, len(text)) if not (text[i - 1].isspace() or text[i].isspace())]


@settings(max_examples=examples(30), deadline=None)
@given(st.data(), st.sampled_from(LOADER_TEMPLATES), st.sampled_from(["", "> ", "E   "]))
def test_a_line_wrapped_inside_a_token_reads_as_the_whole_line(
    data: st.DataObject, loader_template: object, head: str
) -> None:
    _, template = loader_template  # type: ignore[misc]
    _, text = loader_text(data, template)
    assume(not _COLAB_TEXT.search(text))
    col = data.draw(st.sampled_from(_token_columns(text)))
    whole = _ids(head + text)
    assert _ids(head + text[:col] + "\n" + text[col:])[:1] == whole[:1], (text, col)


@settings(max_examples=examples(20), deadline=None)
@given(st.data(), st.sampled_from(FAMILIES), NOISE)
def test_dlerror_with_the_colon_lost(data: st.DataObject, fam: Family, noise: str) -> None:
    lib = data.draw(library_of(fam))
    d = data.draw(dirs)
    why = data.draw(st.sampled_from(["No such file or directory", "Permission denied"]))
    assume(not (fam.missing == "driver-missing" and _COLAB_TEXT.search(noise + d)))
    want = fam.missing
    for text in (
        f"ImportError: {lib} cannot open shared object file: {why}",
        f"ImportError: {d}/{lib} cannot open shared object file: {why}",
        # Java's UnsatisfiedLinkError: "<library>: <dlerror>" (the dlerror inside decides)
        f"java.lang.UnsatisfiedLinkError: {d}/libJfoo.so: {lib}: cannot open shared object file: {why}",
    ):
        assert _ids(noise + text)[:1] == [want], text
    # neighbours: no shared-object name before the words, or one the sentence only mentions
    assert _ids(noise + "the loader cannot open shared object file: the path is wrong")[:1] != [
        want
    ]


@settings(max_examples=examples(20), deadline=None)
@given(st.data(), st.integers(7, 9), NOISE, st.sampled_from(["ops_infer", "cnn", "adv_train", ""]))
def test_a_procedure_missing_in_torchs_own_copy_is_a_second_cudnn_user(
    data: st.DataObject, major: int, noise: str, part: str
) -> None:
    cudnn = next(f for f in FAMILIES if f.role == "cudnn")
    stem = "cudnn" + (f"_{part}" if part else "")
    site = data.draw(
        st.sampled_from([r"C:\Python312\Lib\site-packages", r"D:\env\lib\site-packages"])
    )
    words = data.draw(st.sampled_from(TEXTS[127]))
    win = f'OSError: [WinError 127] {words} Error loading "{site}\\torch\\lib\\{stem}64_{major}.dll" or one of its dependencies.'
    so = f"lib{stem}.so.{major}"
    linux = (
        f"ImportError: /venv/lib/python3.8/site-packages/torch/lib/{so}: undefined symbol: "
        f"cudnnFoo{data.draw(_SYM_TAIL)}, version libcudnn_ops_infer.so.{major}"
    )
    for text in (win, linux):
        assert _ids(noise + text)[:2] == ["cudnn-conflict", cudnn.mismatch], text
    # neighbours: the same failure of a copy that is not torch's own (a toolkit's bin, the
    # nvidia-cudnn wheel reached through torch/lib/../../) mixes two releases on the search path
    elsewhere = win.replace(f"{site}\\torch\\lib", r"C:\CUDA\v12\bin")
    wheel = linux.replace("torch/lib/", "torch/lib/../../nvidia/cudnn/lib/")
    for text in (elsewhere, wheel):
        assert _ids(noise + text)[:1] == [cudnn.mismatch], text
