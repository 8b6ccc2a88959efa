"""Round seventeen (a)'s readings: tools and libraries that say "CUDA is not usable" in their own
words, each from the code that prints it.

- Raised on exactly torch.cuda.is_available() False (or a CUDA device count of zero): the
  "CUDA reports no usable GPU" reading (gpu-missing, a CPU-only build second), and cpu-only-build
  first beside torch's /whl/cpu index. AUTOMATIC1111's launch check ("Torch is not able to use
  GPU; add --skip-torch-cuda-test ..."), Forge's ("Your device does not support the current
  version of Torch/CUDA!"), YOLOv5's "CUDA unavailable, invalid device N requested", PyTorch
  Lightning's "No supported gpu backend found!", "`CUDAAccelerator` can not run on your system
  since the accelerator is not available", "GPUs requested but none are available." and
  "You requested gpu: [...] But your machine only has: []", accelerate's "fp16 mixed precision
  requires a GPU (not 'cpu')", transformers' "No GPU found. A GPU is needed for quantization." and
  "GPU is required to run AWQ quantized model".
- torch c10d's "ProcessGroupNCCL is only supported with GPUs, no GPUs found!" (getNumGPUs() == 0):
  the "No GPU is visible" reading, as "No CUDA GPUs are available".
- Ultralytics' / YOLOv5's "Invalid CUDA 'device=N' requested" (is_available() False or fewer GPUs
  than device= names): the no-usable-GPU reading, unless its own lines say is_available() is
  True: then device= names a GPU the process does not see, and no CPU-only build is offered.
- torch.utils.cpp_extension's "No CUDA runtime is found, using CUDA_HOME=..." (a build-time note)
  and whisper's "FP16 is not supported on CPU; using FP32 instead" (the model is on the CPU):
  the no-usable-GPU reading below any error of the paste; whisper's not when it said CUDA is
  available (since round twenty-six whisper's warning itself ranks first, as harmless, with the
  no-usable-GPU reading right below it).
- transformers' "Your setup doesn't support bf16/gpu" (a GPU without bf16, below Ampere):
  gpu-arch-unsupported, no GPU at all second.
- transformers' "CUDA is required but not available for bitsandbytes" (is_available() False): the
  no-usable-GPU reading.
- TensorFlow's placer, "... was explicitly assigned to /device:GPU:0 but available devices are
  [ <no GPU> ]": TF registered no GPU (gpu-missing, its CUDA libraries not loading second); with
  "The requested device appears to be a GPU, but CUDA is not enabled." a build without CUDA; a
  GPU:1 beside a listed GPU is not read.
- vLLM's "Failed to infer device type" / "No platform detected, vLLM is running on
  UnspecifiedPlatform" (NVML counted no GPU): gpu-missing, the driver's NVML missing second.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(0, 15)
DEVICES = st.lists(NUM, min_size=1, max_size=4).map(lambda ds: ",".join(map(str, ds)))
CPU_INDEX = st.sampled_from(
    [
        "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu\n",
        "pip3 install torch --extra-index-url https://download.pytorch.org/whl/cpu\n",
        "conda install pytorch torchvision cpuonly -c pytorch\n",
    ]
)
ACCELERATORS = st.sampled_from([["cpu"], ["cpu", "tpu"], ["cpu", "mps"], []])

#: the wordings raised on torch.cuda.is_available() False / zero devices, {n} a device index
NO_USABLE_GPU = [
    "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS "
    "variable to disable this check",
    'RuntimeError: Error running command.\nCommand: "/home/u/stable-diffusion-webui/venv/bin/python"'
    " -c \"import torch; assert torch.cuda.is_available(), 'Torch is not able to use GPU; add "
    "--skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable this check'\"\nError code: 1\n"
    'stdout: <empty>\nstderr: Traceback (most recent call last):\n  File "<string>", line 1, in '
    "<module>\nAssertionError: Torch is not able to use GPU; add --skip-torch-cuda-test to "
    "COMMANDLINE_ARGS variable to disable this check",
    "RuntimeError: Your device does not support the current version of Torch/CUDA! Consider "
    "download another version: \nhttps://github.com/lllyasviel/stable-diffusion-webui-forge/"
    "releases/tag/latest",
    "AssertionError: CUDA unavailable, invalid device {n} requested",
    "lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend "
    "found!",
    "RuntimeError: No supported gpu backend found!",
    "lightning.fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not "
    "run on your system since the accelerator is not available. The following accelerator(s) is "
    "available and can be passed into `accelerator` argument of `Trainer`: {acc}.",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUAccelerator can not run "
    "on your system since the accelerator is not available. The following accelerator(s) is "
    "available and can be passed into `accelerator` argument of `Trainer`: {acc}.",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs requested but none "
    "are available.",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested gpu: [{n}]\n"
    " But your machine only has: []",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: \n"
    "                You requested GPUs: [{n}]\n                But your machine only has: []\n",
    "ValueError: fp16 mixed precision requires a GPU (not 'cpu').",
    "RuntimeError: No GPU found. A GPU is needed for quantization.",
    "RuntimeError: GPU is required to run AWQ quantized model. You can use IPEX version AWQ if you "
    "have an Intel CPU",
    "RuntimeError: GPU is required to quantize or run quantize model.",
    "RuntimeError: CUDA is required but not available for bitsandbytes. Please consider "
    "installing the multi-platform enabled version of bitsandbytes, which is currently a work in "
    "progress. Please check currently supported platforms and installation instructions at "
    "https://huggingface.co/docs/bitsandbytes/main/en/installation#multi-backend",
]


def _fill(form: str, n: int, acc: list) -> str:
    return form.replace("{n}", str(n)).replace("{acc}", repr(acc))


@settings(max_examples=examples(60), deadline=None)
@given(form=st.sampled_from(NO_USABLE_GPU), n=NUM, acc=ACCELERATORS, noise=NOISE)
def test_a_wrappers_no_usable_gpu_reads_as_torchs(form, n, acc, noise):
    text = noise + _fill(form, n, acc)
    found = _ids(text)
    assert found[:2] == ["gpu-missing", "cpu-only-build"], (text, found)
    assert {"driver-too-old", "driver-missing"} <= set(found), (text, found)


@settings(max_examples=examples(30), deadline=None)
@given(form=st.sampled_from(NO_USABLE_GPU), n=NUM, acc=ACCELERATORS, index=CPU_INDEX)
def test_beside_the_cpu_index_a_wrappers_no_usable_gpu_is_the_cpu_build(form, n, acc, index):
    text = index + _fill(form, n, acc)
    found = _ids(text)
    assert found[0] == "cpu-only-build", (text, found)


@settings(max_examples=examples(15), deadline=None)
@given(
    device=st.sampled_from(["mps", "xpu", "npu"]),
    gpus=st.lists(NUM, min_size=1, max_size=3),
    noise=NOISE,
)
def test_not_the_cuda_reading_where_the_wrapper_says_otherwise(device, gpus, noise):
    # accelerate's check for another device type, and Lightning's for an index missing among GPUs
    # that are there, are not torch's "no usable CUDA GPU"
    fp16 = f"ValueError: fp16 mixed precision requires a GPU (not '{device}')."
    assert "gpu-missing" not in _ids(noise + fp16)[:1]
    lightning = (
        "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: "
        f"{[g + 1 for g in gpus]}\n But your machine only has: [0]"
    )
    assert "cpu-only-build" not in _ids(noise + lightning)


@settings(max_examples=examples(25), deadline=None)
@given(rank=NUM, noise=NOISE, form=st.sampled_from(["ValueError", "RuntimeError"]))
def test_process_group_nccl_without_gpus_is_no_visible_gpu(rank, noise, form):
    text = (
        f"{noise}[rank{rank}]: Traceback (most recent call last):\n[rank{rank}]: {form}: "
        "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
    )
    found = _ids(text)
    assert found[0] == "gpu-missing", (text, found)
    # ProcessGroupNCCL's check is a device count of zero, like "No CUDA GPUs are available"
    assert "cpu-only-build" not in found, (text, found)


ULTRA = (
    "ValueError: Invalid CUDA 'device={d}' requested. Use 'device=cpu' or pass valid CUDA "
    "device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU."
)
YOLOV5 = (
    "AssertionError: Invalid CUDA '--device {d}' requested, use '--device cpu' or pass valid "
    "CUDA device(s)"
)


@settings(max_examples=examples(40), deadline=None)
@given(
    form=st.sampled_from([ULTRA, YOLOV5]),
    d=DEVICES,
    count=st.integers(0, 8),
    visible=st.sampled_from(["None", "0", "1,2"]),
    shown=st.sampled_from([None, False, True]),
    noise=NOISE,
)
def test_select_device_reads_its_own_is_available_line(form, d, count, visible, shown, noise):
    text = noise + form.format(d=d)
    if shown is not None:
        text += (
            f"\n\ntorch.cuda.is_available(): {shown}\ntorch.cuda.device_count(): {count}\n"
            f"os.environ['CUDA_VISIBLE_DEVICES']: {visible}\n"
        )
    found = _ids(text)
    assert found[0] == "gpu-missing", (text, found)
    if shown:
        # CUDA works: device= names more GPUs (or another index) than the process sees
        assert "cpu-only-build" not in found, (text, found)
    else:
        assert found[1] == "cpu-only-build", (text, found)


ERRORS = st.sampled_from(
    [
        (
            "ImportError: libcudart.so.12: cannot open shared object file: No such file or "
            "directory",
            "cuda-lib-missing",
        ),
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "gpu-arch-unsupported",
        ),
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(
    home=st.sampled_from(["/usr/local/cuda", "/usr/local/cuda-12.{n}", "/opt/cuda", "C:\\CUDA"]),
    n=st.integers(0, 9),
    logged=st.booleans(),
    error=ERRORS,
    noise=NOISE,
)
def test_cpp_extension_no_runtime_note_is_no_usable_gpu_below_an_error(
    home, n, logged, error, noise
):
    line = f"No CUDA runtime is found, using CUDA_HOME='{home.replace('{n}', str(n))}'"
    if logged:
        line = "WARNING:torch.utils.cpp_extension:" + line
    found = _ids(noise + line)
    assert found[:2] == ["gpu-missing", "cpu-only-build"], (line, found)
    err, fid = error
    assert _ids(f"{noise}{line}\nrunning build_ext\n{err}")[0] == fid


WHISPER = (
    "{p}/whisper/transcribe.py:{n}: UserWarning: FP16 is not supported on CPU; using FP32 "
    'instead\n  warnings.warn("FP16 is not supported on CPU; using FP32 instead")'
)
PREFIX = st.sampled_from(
    ["/usr/local/lib/python3.10/dist-packages", "C:\\Python311\\Lib\\site-packages", "/opt/venv"]
)


@settings(max_examples=examples(30), deadline=None)
@given(p=PREFIX, n=st.integers(1, 600), noise=NOISE, error=ERRORS)
def test_whisper_on_the_cpu_is_a_warning_with_no_usable_gpu_below_it(p, n, noise, error):
    """Round twenty-six: the warning is harmless by its emitter (transcribe() goes on in FP32);
    no usable GPU and a CPU-only build stay right below it."""
    warn = WHISPER.format(p=p, n=n)
    found = _ids(noise + warn)
    assert found[0] == "log-noise" and found[1:3] == ["gpu-missing", "cpu-only-build"], (
        warn,
        found,
    )
    chose = f"{p}/whisper/transcribe.py:{n}: UserWarning: Performing inference on CPU when CUDA is available\n"
    assert "gpu-missing" not in _ids(noise + chose + warn)
    err, fid = error
    assert _ids(f"{noise}{warn}\n{err}")[0] == fid


@settings(max_examples=examples(15), deadline=None)
@given(noise=NOISE, prefix=st.sampled_from(["", '  File "train.py", line 9, in <module>\n']))
def test_transformers_bf16_gpu_is_a_gpu_without_bf16(noise, prefix):
    text = (
        f"{noise}{prefix}ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, "
        "using Ampere GPU with cuda>=11.0"
    )
    found = _ids(text)
    # (a harmless line of the noise ranks among the alternatives, never first)
    assert [f for f in found if f != "log-noise"][:2] == [
        "gpu-arch-unsupported",
        "gpu-missing",
    ], (text, found)


CPU_DEVICES = st.lists(
    st.sampled_from(["CPU", "XLA_CPU"]).flatmap(
        lambda t: NUM.map(lambda i: f"/job:localhost/replica:0/task:0/device:{t}:{i}")
    ),
    min_size=1,
    max_size=3,
)
PLACED = st.sampled_from(
    [
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for "
        "operation {op}: {{{{node {op}}}}} was explicitly assigned to {dev} but available devices "
        "are [ {devs} ]. Make sure the device specification refers to a valid device.",
        "InvalidArgumentError (see above for traceback): Cannot assign a device for operation "
        "'{op}': Operation was explicitly assigned to {dev} but available devices are [ {devs} ]. "
        "Make sure the device specification refers to a valid device.",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(
    form=PLACED,
    op=st.sampled_from(["MatMul", "random_normal/RandomStandardNormal", "Conv2D"]),
    dev=st.sampled_from(
        ["/device:GPU:0", "/gpu:0", "/job:localhost/replica:0/task:0/device:GPU:0"]
    ),
    devs=CPU_DEVICES,
    cpu_build=st.booleans(),
    noise=NOISE,
)
def test_tensorflow_placer_with_no_gpu_registered(form, op, dev, devs, cpu_build, noise):
    text = noise + form.format(op=op, dev=dev, devs=", ".join(devs))
    if cpu_build:
        text += " The requested device appears to be a GPU, but CUDA is not enabled."
    found = _ids(text)
    if cpu_build:
        assert found[0] == "cpu-only-build", (text, found)
    else:
        assert found[:2] == ["gpu-missing", "cuda-lib-missing"], (text, found)
        assert "cpu-only-build" in found, (text, found)
    # a GPU that is not the first, beside a registered GPU, is not "no GPU registered"
    other = form.format(
        op=op,
        dev=dev.replace("GPU:0", "GPU:1").replace("gpu:0", "gpu:1"),
        devs=", ".join(devs + ["/job:localhost/replica:0/task:0/device:GPU:0"]),
    )
    assert "gpu-missing" not in _ids(noise + other)[:1], other


@settings(max_examples=examples(20), deadline=None)
@given(
    n=st.integers(1, 3000),
    noise=NOISE,
    lines=st.sets(st.sampled_from(["info", "trace", "error"]), min_size=1),
)
def test_vllm_without_a_platform_is_no_gpu(n, noise, lines):
    parts = []
    if "info" in lines:
        parts.append(
            f"INFO 03-01 20:22:56 __init__.py:{n}] No platform detected, vLLM is running on "
            "UnspecifiedPlatform"
        )
    if "trace" in lines:
        parts.append(
            f'  File "/usr/local/lib/python3.12/dist-packages/vllm/config.py", line {n}, in '
            '__init__\n    raise RuntimeError("Failed to infer device type")'
        )
    if lines & {"trace", "error"}:  # a traceback ends with the exception's line
        parts.append("RuntimeError: Failed to infer device type")
    text = noise + "\n".join(parts)
    found = _ids(text)
    assert found[:2] == ["gpu-missing", "driver-missing"], (text, found)
