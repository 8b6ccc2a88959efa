"""Round thirty (a): read from the misses of sets 93-94 (the twentieth session's final blind sets,
measured unread on its first and its last tree), each reading derived from its emitter's source
(cited beside the rule in recipes/errors.toml):

- MXNet's imperative API choosing a GPU context in a build without CUDA: "GPU support is
  disabled. Compile MXNet with USE_CUDA=1" (cpu-only-build);
- PaddlePaddle's loader note "[Recommend] copy cudnn into ...", logged only after every name of
  the cuDNN library failed to load (cudnn-missing);
- PaddlePaddle's loader suggestion "After Mac OS 10.11, using the DYLD_LIBRARY_PATH ..." is
  printed on every platform: it names no Mac;
- an allocation that "could not" / "cannot" be made reads as memory running out, as "failed to
  allocate" did;
- Python's "cannot import name X from Y": two packages of releases that do not go together.

Round thirty (b), from the misses of sets 85-92 that both labellers agreed on and their rounds
left: an Apple-silicon Mac as users name it and ComfyUI's Metal start-up lines; a cuDNN named
installed before ", but ..."; TensorFlow's diagnostics showing two driver releases.

Round thirty (c), from the misses of sets 95-98 (measured unread first): TensorFlow's cudart
warning on a machine said to have no GPU; Debian's dist-packages directory is no Colab; cuDNN
skipping an optional cuBLAS entry point; OpenCV DNN without the GPU's architecture; Warp and
FFmpeg without libcuda; an NVIDIA GPU bound to nouveau; nvcc's message in lower case; NVML's "Not
Supported" sensor; AMD's graphics drivers named; a "+cpu" requirement pip could not find.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

_TIME = st.from_regex(r"\A[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\Z", fullmatch=True)
_OP = st.from_regex(r"\A_?[a-z][a-z_]{1,20}\Z", fullmatch=True)


@settings(max_examples=examples(60), deadline=None)
@given(t=_TIME, op=_OP, line=st.integers(1, 400), noise=NOISE)
def test_mxnet_imperative_api_in_a_build_without_cuda(t, op, line, noise):
    text = (
        noise
        + f"[{t}] src/imperative/./imperative_utils.h:{line}: GPU support is disabled. Compile MXNet "
        "with USE_CUDA=1 to enable GPU support.\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        f"mxnet.base.MXNetError: [{t}] src/imperative/imperative.cc:{line}: Operator {op} is not "
        "implemented for GPU.\n"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(60), deadline=None)
@given(
    where=st.sampled_from(
        [
            "CUDA installation directory. \n For instance, download cudnn-10.0-windows10-x64-v7.6.5.32.zip from NVIDIA's official website, \nthen, unzip it and copy it into C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v10.0\nYou should do this according to your CUDA installation directory and CUDNN version.",
            "/usr/local/cuda/ \n For instance, sudo tar -xzf cudnn-7.5-osx-x64-v5.0-ga.tgz -C /usr/local \n sudo chmod a+r /usr/local/cuda/include/cudnn.h /usr/local/cuda/lib/libcudnn*",
        ]
    ),
    cc=st.sampled_from(["6.1", "7.5", "8.6"]),
    noise=NOISE,
)
def test_paddles_loader_note_after_no_cudnn_loaded(where, cc, noise):
    text = (
        noise
        + f"W0804 21:55:45.072443 12172 device_context.cc:404] Please NOTE: device: 0, GPU Compute Capability: {cc}, Driver API Version: 11.2, Runtime API Version: 10.2\n"
        f"W0804 21:55:45.073442 12172 dynamic_loader.cc:238] Note: [Recommend] copy cudnn into {where}\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 53, in <module>\n'
    )
    assert _ids(text)[0] == "cudnn-missing", text


@settings(max_examples=examples(40), deadline=None)
@given(lib=st.sampled_from(["libcudnn.so", "libcublas.so", "libcuda.so"]), noise=NOISE)
def test_paddles_loader_suggestion_names_no_mac(lib, noise):
    text = (
        noise
        + f"W0508 21:40:15.979074  1551 dynamic_loader.cc:412] The third-party dynamic library ({lib}) that Paddle depends on is not configured correctly. (error code is {lib}: cannot open shared object file: No such file or directory)\n"
        "  Suggestions:\n"
        "  1. Check if the third-party dynamic library (e.g. CUDA, CUDNN) is installed correctly and its version is matched with paddlepaddle you installed.\n"
        "  2. Configure third-party dynamic library environment variables as follows:\n"
        "  - Linux: set LD_LIBRARY_PATH by `export LD_LIBRARY_PATH=...`\n"
        "  - Windows: set PATH by `set PATH=XXX;%PATH%`\n"
        "  - Mac: set  DYLD_LIBRARY_PATH by `export DYLD_LIBRARY_PATH=...` [Note: After Mac OS 10.11, using the DYLD_LIBRARY_PATH is impossible unless System Integrity Protection (SIP) is disabled.]\n"
    )
    assert "gpu-missing" not in _ids(text)[:1], text
    if lib == "libcuda.so":
        # a Mac the user names is still read as one: no NVIDIA GPU for the driver library
        assert _ids("I run it on Mac OS 14.\n" + text)[0] == "gpu-missing"


@settings(max_examples=examples(60), deadline=None)
@given(
    verb=st.sampled_from(["Could not", "could not", "Cannot", "cannot", "can't", "Couldn't"]),
    what=st.sampled_from(
        [
            "shared buffer for CUDA basecaller",
            "memory",
            "80.000000MB memory on GPU 0",
            "the device buffer",
        ]
    ),
    prefix=st.sampled_from(
        [
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  ",
            "ERROR: ",
            "",
        ]
    ),
)
def test_an_allocation_that_could_not_be_made_is_memory_running_out(verb, what, prefix):
    text = f"{prefix}{verb} allocate {what}.\nAborted (core dumped)\n"
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(60), deadline=None)
@given(
    name=st.from_regex(r"\A[a-z][A-Za-z_]{2,30}\Z", fullmatch=True),
    module=st.from_regex(r"\A[a-z][a-z_]{1,12}(\.[a-z_]{1,12}){0,3}\Z", fullmatch=True),
)
def test_a_name_one_package_expects_of_another_is_a_release_mismatch(name, module):
    text = (
        "Traceback (most recent call last):\n"
        '  File "run.py", line 3, in <module>\n'
        f"ImportError: cannot import name '{name}' from '{module}'\n"
    )
    result = analyze(text)
    assert result.findings[0].id == "pip-conflict", text
    # a guess from the words, never a recognised message
    assert not result.recognised


def test_a_name_from_an_unknown_location_is_not_read_as_a_release_mismatch():
    text = "ImportError: cannot import name 'x' from 'pkg' (unknown location)\n"
    assert "pip-conflict" not in _ids(text)[:1]


# --- round thirty (b): read from the agreed misses of sets 85-92 (both labellers named the same
# cause and explain another) that their rounds left unread

_MAC_NAMED = st.sampled_from(
    ["M2 MAC", "an M1 Pro MacBook", "my m3 max macbook", "Mac silicon", "M1 Macs", "an m2 mac"]
)


@settings(max_examples=examples(60), deadline=None)
@given(mac=_MAC_NAMED, noise=NOISE)
def test_an_apple_silicon_mac_named_as_users_name_it(mac, noise):
    text = (
        noise
        + f"Hi I'm getting this error on {mac} when I run it.\n\nAssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _ids(text)[0] == "gpu-missing", text


@settings(max_examples=examples(40), deadline=None)
@given(
    lines=st.sampled_from(
        [
            "Set vram state to: SHARED\nDevice: mps\n",
            "Total VRAM 24576 MB, total RAM 24576 MB\nDevice: mps\n",
            "Set vram state to: SHARED\n",
        ]
    ),
    noise=NOISE,
)
def test_comfyuis_metal_start_up_lines_name_a_machine_without_an_nvidia_gpu(lines, noise):
    text = (
        noise
        + lines
        + "UserWarning: The installed version of bitsandbytes was compiled without GPU support.\n"
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _ids(text)[0] == "gpu-missing", text


def test_a_cuda_device_line_is_no_mac():
    text = (
        "Set vram state to: NORMAL_VRAM\nDevice: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync\n"
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _ids(text)[0] != "gpu-missing"


@settings(max_examples=examples(60), deadline=None)
@given(
    have=st.integers(6, 9),
    want=st.integers(4, 9),
    turn=st.sampled_from([", but", " but", ", But"]),
)
def test_a_cudnn_named_installed_before_but_is_present(have, want, turn):
    assume(have != want)
    text = (
        f"I installed Cuda 9.0 and CuDNN v{have}{turn} I keep getting this error.\n"
        f"ImportError: libcudnn.so.{want}: cannot open shared object file: No such file or directory\n"
    )
    assert _ids(text)[0] == "cudnn-major-mismatch", text
    # a failure in the same clause as the copy still denies it
    failed = f"CuDNN v{have} failed to install, but I kept going.\n" + text.split("\n", 1)[1]
    assert _ids(failed)[0] == "cudnn-missing", failed


@settings(max_examples=examples(60), deadline=None)
@given(
    dso=st.from_regex(r"\A[3-5][0-9]{2}\.[0-9]{1,3}\.0\Z", fullmatch=True),
    kernel=st.from_regex(r"\A[3-5][0-9]{2}\.[0-9]{1,3}\.0\Z", fullmatch=True),
    host=st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9-]{0,20}\Z", fullmatch=True),
)
def test_tensorflows_diagnostics_showing_two_driver_releases(dso, kernel, host):
    text = (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: CUDA_ERROR_NO_DEVICE\n"
        f"I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:158] retrieving CUDA diagnostic information for host: {host}\n"
        f"I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:165] hostname: {host}\n"
        f"I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported version is: {dso}\n"
        f'I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:369] driver version file contents: """NVRM version: NVIDIA UNIX x86_64 Kernel Module  {kernel[:-2]}  Tue Sep 19 19:17:35 PDT 2017\n'
        "GCC version:  gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.5)\n"
        '"""\n'
        f"I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:193] kernel reported version is: {kernel}\n"
    )
    first = analyze(text).findings[0]
    if dso == kernel:
        # one release: the diagnostics show no mismatch, and no reading says they do
        assert "two releases" not in first.title, text
    else:
        assert first.id == "driver-missing" and "two releases" in first.title, text


# --- round thirty (c): read from the misses of sets 95-98 (the twenty-first session's first blind
# sets, measured unread on its first tree and after rounds (a) and (b))


@settings(max_examples=examples(40), deadline=None)
@given(
    said=st.sampled_from(
        [
            "I don't have gpu.",
            "I do not have a GPU on this laptop.",
            "My machine has no NVIDIA GPU.",
        ]
    ),
    dll=st.sampled_from(["cudart64_101.dll", "cudart64_110.dll", "libcudart.so.11.0"]),
)
def test_tensorflows_cudart_warning_on_a_machine_said_to_have_no_gpu_is_harmless(said, dll):
    text = (
        f"I am getting this error when importing tensorflow. {said}\n\n"
        f"W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library '{dll}'; dlerror: {dll} not found\n"
        "I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.\n"
    )
    ids = _ids(text)
    assert ids[0] == "log-noise" and "cuda-lib-missing" in ids[1:], text
    # with the GPU named instead, the missing runtime is the cause
    gpu = text.replace(said, "I have an NVIDIA GeForce RTX 3060.")
    assert _ids(gpu)[0] == "cuda-lib-missing", gpu


@settings(max_examples=examples(40), deadline=None)
@given(
    py=st.sampled_from(["3.5", "3.8", "3.10", "3.12"]),
    host=st.from_regex(r"\A[0-9a-f]{12}\Z", fullmatch=True),
)
def test_debians_dist_packages_directory_names_no_colab(py, host):
    text = (
        "$ docker run -it gpt-2 bash\n"
        f"root@{host}:/gpt-2# python3 src/run.py\n"
        f'  File "/usr/local/lib/python{py}/dist-packages/tensorflow/python/pywrap_tensorflow.py", line 58, in <module>\n'
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert _ids(text)[0] == "driver-missing", text
    colab = text.replace("$ docker run -it gpt-2 bash\n", "/content/drive/MyDrive\n")
    assert _ids(colab)[0] == "gpu-missing", colab


@settings(max_examples=examples(40), deadline=None)
@given(
    where=st.sampled_from(
        [
            "from libcublas.so.11. Error: /usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.11: undefined symbol: cublasGetSmCountTarget",
            "from cublas64_11.dll. Error code 127",
        ]
    ),
    noise=NOISE,
)
def test_cudnn_skipping_an_optional_cublas_entry_point_is_harmless(where, noise):
    text = noise + f"Could not load symbol cublasGetSmCountTarget {where}\n"
    result = analyze(text)
    assert result.findings[0].id == "log-noise" and result.benign, text
    # a failure beside it ranks first
    failed = text + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert _ids(failed)[0] == "out-of-memory"


@settings(max_examples=examples(40), deadline=None)
@given(
    where=st.sampled_from(
        [
            "C:\\opencv\\modules\\dnn\\src\\dnn.cpp:2385: error: (-216:No CUDA support) OpenCV was not built to work with the selected device. Please check CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build configuration. in function 'cv::dnn::dnn4_v20210608::Net::Impl::initCUDABackend'",
            "/opt/opencv/modules/dnn/src/op_cuda.cpp:30: error: (-216:No CUDA support) OpenCV was not built to work with the selected device. Please check CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build configuration. in function 'initCUDABackend'",
        ]
    ),
    ver=st.sampled_from(["4.5.3", "4.9.0"]),
)
def test_opencv_dnn_built_without_the_gpus_architecture(where, ver):
    text = f"cv2.error: OpenCV({ver}) {where}\n"
    assert _ids(text)[0] == "gpu-arch-unsupported", text
    # the same error code for a build without CUDA says so in its own words
    cpu = "cv2.error: OpenCV(4.10.0) /io/opencv/modules/core/include/opencv2/core/private.cuda.hpp:106: error: (-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'\n"
    assert _ids(cpu)[0] == "cpu-only-build"


@settings(max_examples=examples(40), deadline=None)
@given(
    spell=st.sampled_from(
        [
            "Warp CUDA error: Could not open libcuda.so.",
            "Warp CUDA Error: Could not open nvcuda.dll.",
        ]
    ),
    ver=st.sampled_from(["1.0.2", "1.7.0"]),
)
def test_warp_without_the_driver_library(spell, ver):
    text = (
        f"{spell}\nWarp {ver} initialized:\n   CUDA Toolkit 12.8, Driver 0.0 (insufficient CUDA driver version!)\n"
        "   The minimum required CUDA driver version is 12.0, but the installed CUDA driver version is 0.0.\n"
    )
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(40), deadline=None)
@given(
    gpu=st.sampled_from(
        [
            "GK208M [GeForce 920M]",
            "TU117M [GeForce GTX 1650 Mobile / Max-Q]",
            "GA104 [GeForce RTX 3070]",
        ]
    ),
    quote=st.sampled_from(["", "> "]),
)
def test_an_nvidia_gpu_bound_to_nouveau_has_no_nvidia_driver(gpu, quote):
    text = (
        f"{quote}00:02.0 VGA compatible controller: Intel Corporation HD Graphics 5500 (rev 09)\n"
        f"{quote}        Kernel driver in use: i915\n"
        f"{quote}08:00.0 3D controller: NVIDIA Corporation {gpu} (rev a1)\n"
        f"{quote}        Subsystem: Dell Device 06ae\n"
        f"{quote}        Kernel driver in use: nouveau\n"
    )
    assert _ids(text)[0] == "driver-missing", text
    loaded = text.replace("in use: nouveau", "in use: nvidia")
    assert "driver-missing" not in _ids(loaded)[:1]


@settings(max_examples=examples(40), deadline=None)
@given(
    ctx=st.sampled_from(["AVHWDeviceContext", "hevc_nvenc", "h264_cuvid"]),
    lib=st.sampled_from(["libcuda.so.1", "nvcuda.dll"]),
    addr=st.from_regex(r"\A0x[0-9a-f]{12}\Z", fullmatch=True),
)
def test_ffmpeg_without_the_drivers_cuda_library(ctx, lib, addr):
    text = (
        f"[{ctx} @ {addr}] Cannot load {lib}\n"
        f"[{ctx} @ {addr}] Could not dynamically load CUDA\n"
        "Device creation failed: -1313558101.\n"
    )
    assert _ids(text)[0] == "driver-missing", text
    amd = "GPU: AMD Radeon RX 6600\n" + text
    assert _ids(amd)[0] == "gpu-missing", amd


@settings(max_examples=examples(40), deadline=None)
@given(
    arch=st.sampled_from(["compute_86", "compute_89", "sm_90"]),
    cuda=st.sampled_from(["11.0", "10.2"]),
)
def test_nvccs_unknown_architecture_in_lower_case(arch, cuda):
    text = f"unsupported gpu architecture '{arch}'. Unable to build for rtx 3090, cuda {cuda}\n"
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(40), deadline=None)
@given(
    query=st.sampled_from(
        ["nvmlDeviceGetFanSpeed", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature"]
    ),
    noise=NOISE,
)
def test_an_nvml_sensor_the_board_does_not_have_is_harmless(query, noise):
    text = (
        noise
        + f"hashcat (v3.20) starting...\n\n{query}(): Not Supported\n\nOpenCL Platform #1: NVIDIA Corporation\n"
    )
    result = analyze(text)
    assert result.findings[0].id == "log-noise" and result.benign, text


@settings(max_examples=examples(40), deadline=None)
@given(words=st.sampled_from(["the latest amd drivers", "AMD graphics drivers", "amd gpu driver"]))
def test_amds_graphics_driver_named_is_a_machine_without_an_nvidia_gpu(words):
    text = (
        f"im using windows 7 and {words}\n\n"
        "CUDA error 'CUDA driver version is insufficient for CUDA runtime version' in func 'cuda_tromp::getinfo' line 45\n"
    )
    assert _ids(text)[0] == "gpu-missing", text
    chipset = text.replace(words, "the AMD chipset drivers")
    assert _ids(chipset)[0] != "gpu-missing", chipset


@settings(max_examples=examples(40), deadline=None)
@given(
    ver=st.sampled_from(["1.5.1", "2.0.1", "1.13.0"]),
    py=st.sampled_from(["Python37-32", "Python38-32"]),
)
def test_a_cpu_wheel_pip_could_not_find_is_no_installed_build(ver, py):
    text = (
        f"C:\\Python\\{py}\\Scripts>pip install torch=={ver}+cpu -f https://download.pytorch.org/whl/torch_stable.html\n"
        f"ERROR: Could not find a version that satisfies the requirement torch=={ver}+cpu (from versions: 0.1.2, 0.1.2.post1)\n"
        f"ERROR: No matching distribution found for torch=={ver}+cpu\n"
    )
    assert _ids(text)[0] == "pip-conflict", text
    installed = f"INFO     Torch {ver}+cpu\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert _ids(installed)[0] == "cpu-only-build", installed
