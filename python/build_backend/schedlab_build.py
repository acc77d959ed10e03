"""The PEP 517 build backend of the `schedlab` wheel, in-tree (pyproject.toml's
`backend-path`) and written with the standard library only, so that
`pip install .` works offline: pip's isolated build environment needs nothing
installed (`requires = []`), where setuptools or scikit-build would have to
be downloaded.

build_wheel:
1. builds the native core with CMake: the `schedlab` CLI and the bindings
   (pybind/, the module schedlab._core, for the Python that runs this
   backend), in a build tree that is configured here when new and reused as
   configured otherwise. Default `build-wheel/` in the checkout; another with
   `pip wheel . -C build-dir=DIR` or SCHEDLAB_BUILD_DIR=DIR (e.g. the tree
   CI's tests just built: nothing is compiled twice). A new tree uses ccache
   when it is on PATH.
2. packs python/schedlab (with _core and bin/schedlab) and
   python/schedlab_export, and the .dist-info (METADATA from pyproject.toml's
   [project], entry point `schedlab`, RECORD with sha256 digests) into
   schedlab-VERSION-cpXY-cpXY-PLATFORM.whl.
build_sdist packs the files git tracks (or, outside git, the tree without
build outputs).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("schedlab", "schedlab_export")  # under python/
# Timestamp of every archive member (zip cannot go before 1980): the same
# sources give the same wheel bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(RuntimeError):
    pass


# --- metadata -----------------------------------------------------------------
def _project() -> dict:
    try:
        import tomllib
    except ImportError as e:  # Python < 3.11
        raise BuildError("building the schedlab wheel needs Python 3.11 or newer (tomllib)") from e
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f).get("project")
    for key in ("name", "version", "description", "requires-python"):
        if not project or key not in project:
            raise BuildError(f"pyproject.toml: [project] has no {key!r}")
    return project


def _dist_name(project: dict) -> str:
    return project["name"].replace("-", "_")


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    if "license" in project:
        lines.append(f"License: {project['license'].get('text', '')}")
    for url_name, url in project.get("urls", {}).items():
        lines.append(f"Project-URL: {url_name}, {url}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    readme = project.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _entry_points(project: dict) -> str:
    scripts = project.get("scripts", {})
    return "[console_scripts]\n" + "".join(f"{name} = {target}\n" for name, target in scripts.items()) if scripts else ""


def _wheel_tag() -> str:
    """cpXY-cpXY-PLATFORM: the bindings are built for this interpreter."""
    if sys.implementation.name != "cpython":
        raise BuildError(f"the bindings are built for CPython; this is {sys.implementation.name}")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = python + ("d" if sysconfig.get_config_var("Py_DEBUG") else "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{abi}-{platform}"


# --- the native build ---------------------------------------------------------
def _run(cmd: list[str]) -> None:
    print("schedlab_build:", " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, check=True, stdout=sys.stderr)  # pip shows the backend's stderr on failure
    except FileNotFoundError as e:
        raise BuildError(f"{cmd[0]} not found: the wheel builds the core with CMake and a C++20 compiler "
                         "(Debian: apt-get install cmake g++ nlohmann-json3-dev libcli11-dev python3-dev pybind11-dev)") from e
    except subprocess.CalledProcessError as e:
        raise BuildError(f"{' '.join(cmd[:3])}... failed (exit {e.returncode}); its output is above") from e


def _build_dir(config_settings: dict | None) -> Path:
    given = (config_settings or {}).get("build-dir") or os.environ.get("SCHEDLAB_BUILD_DIR")
    return Path(given).resolve() if given else ROOT / "build-wheel"


def build_native(build_dir: Path) -> tuple[Path, Path]:
    """Builds `schedlab` and schedlab._core in `build_dir`; their paths."""
    if not (build_dir / "CMakeCache.txt").is_file():
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     "-DSCHEDLAB_BUILD_TESTS=OFF", "-DSCHEDLAB_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        _run(configure)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    _run(["cmake", "--build", str(build_dir), "--target", "schedlab", "schedlab_python", "-j", jobs])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build_dir / "python" / "schedlab" / f"_core{suffix}"
    binary = build_dir / "schedlab"
    if not module.is_file():
        found = sorted(p.name for p in (build_dir / "python" / "schedlab").glob("_core*"))
        raise BuildError(f"{build_dir}: no {module.name} for this Python ({sys.executable}); the tree has "
                         f"{', '.join(found) or 'none'}: it was configured for another Python, build in a new tree "
                         "(-C build-dir=DIR or SCHEDLAB_BUILD_DIR)")
    if not binary.is_file():
        raise BuildError(f"{build_dir}: the build left no schedlab binary")
    return binary, module


# --- archives -------------------------------------------------------------------
def _python_files(package: str) -> list[Path]:
    folder = ROOT / "python" / package
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


class _Wheel:
    """A wheel written member by member, with its RECORD."""

    def __init__(self, path: Path, dist_info: str):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.dist_info = dist_info
        self.record: list[str] = []

    def add(self, name: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
        info.external_attr = (0o100755 if executable else 0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{name},sha256={digest},{len(data)}")

    def close(self) -> None:
        record = f"{self.dist_info}/RECORD"
        self.record.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=_ZIP_TIME)
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n")
        self.zip.close()


def _dist_info_files(project: dict, tag: str) -> dict[str, str]:
    files = {"METADATA": _metadata(project),
             "WHEEL": f"Wheel-Version: 1.0\nGenerator: schedlab_build\nRoot-Is-Purelib: false\nTag: {tag}\n",
             "top_level.txt": "".join(p + "\n" for p in PACKAGES)}
    if entry_points := _entry_points(project):
        files["entry_points.txt"] = entry_points
    return files


# --- PEP 517 hooks --------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    tag = _wheel_tag()
    binary, module = build_native(_build_dir(config_settings))
    name, version = _dist_name(project), project["version"]
    dist_info = f"{name}-{version}.dist-info"
    filename = f"{name}-{version}-{tag}.whl"
    out = Path(wheel_directory)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / (filename + ".partial")  # a failed build leaves no wheel behind
    try:
        wheel = _Wheel(partial, dist_info)
        for package in PACKAGES:
            for path in _python_files(package):
                wheel.add(f"{package}/{path.relative_to(ROOT / 'python' / package).as_posix()}", path.read_bytes())
        wheel.add("schedlab/_version.py", f'__version__ = "{version}"\n'.encode())
        wheel.add(f"schedlab/{module.name}", module.read_bytes())
        wheel.add("schedlab/bin/schedlab", binary.read_bytes(), executable=True)
        for file_name, text in _dist_info_files(project, tag).items():
            wheel.add(f"{dist_info}/{file_name}", text.encode())
        wheel.close()
        partial.replace(out / filename)
    finally:
        partial.unlink(missing_ok=True)
    return filename


def _sdist_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True).stdout
        return sorted(f for f in listed.decode().split("\0") if f and (ROOT / f).is_file())
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "node_modules", "out", "web-dist", "__pycache__"}
        return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                      if p.is_file() and not any(part in skip or part.startswith("build") for part in p.relative_to(ROOT).parts))


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"
    out = Path(sdist_directory)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / (filename + ".partial")
    try:
        with tarfile.open(partial, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for rel in _sdist_files():
                tar.add(ROOT / rel, arcname=f"{base}/{rel}", recursive=False)
            pkg_info = _metadata(project).encode()
            info = tarfile.TarInfo(f"{base}/PKG-INFO")
            info.size = len(pkg_info)
            tar.addfile(info, io.BytesIO(pkg_info))
        partial.replace(out / filename)
    finally:
        partial.unlink(missing_ok=True)
    return filename
