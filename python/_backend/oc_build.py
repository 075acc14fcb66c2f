"""oc_build: the build backend of the onnxconvert package (PEP 517, PEP 660).

The standard library only, so that `pip install ./python` needs no network
and no setuptools, with or without build isolation (pyproject.toml asks for
no build requirements).

The wheel holds python/onnxconvert/*.py. When the checkout's
build/libonnxconvert.so.<VERSION> exists (python/../build, after `make`), it
goes into the wheel as onnxconvert/libonnxconvert.so.0 and the wheel is
tagged for this platform (py3-none-linux_<arch>), since it then holds
machine code; otherwise the wheel is pure (py3-none-any) and the package
finds the library on the loader path (onnxconvert/_find.py says the order).

The version is the C library's: ONNXCONVERT_VERSION of include/onnxconvert.h
when the checkout is there, else the PKG-INFO of the sdist being built.
"""
import base64
import hashlib
import io
import os
import platform
import re
import tarfile
import time
import zipfile

NAME = "onnxconvert"
SONAME = "libonnxconvert.so.0"
SUMMARY = ("Convert ONNX models between opset versions, optimize them and run "
           "them with a reference evaluator (the onnx-convert C library)")
REQUIRES = ["numpy"]
REQUIRES_PYTHON = ">=3.8"

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)              # python/
CHECKOUT = os.path.dirname(SOURCE)          # the project root, when there
HEADER = os.path.join(CHECKOUT, "include", "onnxconvert.h")
PACKAGE = os.path.join(SOURCE, NAME)


# ---- what goes in ------------------------------------------------------------

def _version():
    """The header's ONNXCONVERT_VERSION, else the Version of PKG-INFO (an
    unpacked sdist has no header beside it)."""
    for path, pattern in ((HEADER, r'^#define ONNXCONVERT_VERSION "([^"]+)"'),
                          (os.path.join(SOURCE, "PKG-INFO"), r"^Version: (\S+)")):
        try:
            with open(path, encoding="utf-8") as f:
                m = re.search(pattern, f.read(), re.M)
        except OSError:
            continue
        if m:
            return m.group(1)
    raise RuntimeError(f"oc_build: no version: neither {HEADER} (ONNXCONVERT_VERSION) "
                       f"nor {SOURCE}/PKG-INFO is there")


def _library(version):
    """The checkout's built shared library of this version, or None."""
    path = os.path.join(CHECKOUT, "build", f"libonnxconvert.so.{version}")
    return path if os.path.isfile(path) else None


def _modules():
    """The package's modules, sorted (the wheel's bytes do not depend on
    the order the folder lists them in)."""
    return sorted(n for n in os.listdir(PACKAGE) if n.endswith(".py"))


def _tag(library):
    if library is None:
        return "py3-none-any"
    arch = platform.machine().lower().replace("-", "_").replace(".", "_")
    return f"py3-none-linux_{arch}"


def _metadata(version):
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}",
             f"Summary: {SUMMARY}", "License: see the project's README",
             f"Requires-Python: {REQUIRES_PYTHON}"]
    lines += [f"Requires-Dist: {r}" for r in REQUIRES]
    return "\n".join(lines) + "\n"


def _wheel_file(tag, pure):
    return ("Wheel-Version: 1.0\nGenerator: oc_build\n"
            f"Root-Is-Purelib: {'true' if pure else 'false'}\nTag: {tag}\n")


def _dist_info(version):
    return f"{NAME}-{version}.dist-info"


# ---- writing a wheel -----------------------------------------------------------

class _Wheel:
    """A wheel being written: every member's RECORD line is kept as it goes
    in, and RECORD itself is the last member."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, mode=0o644):
        # a fixed date: the same sources give the same wheel
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append(f"{arcname},sha256={digest.decode()},{len(data)}")

    def close(self, record_name):
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write_dist_info(whl, version, tag, pure):
    di = _dist_info(version)
    whl.add(f"{di}/METADATA", _metadata(version).encode())
    whl.add(f"{di}/WHEEL", _wheel_file(tag, pure).encode())
    whl.add(f"{di}/top_level.txt", f"{NAME}\n".encode())
    return f"{di}/RECORD"


def _build(wheel_directory, contents):
    """Writes a wheel into wheel_directory; `contents(whl)` adds the
    package's files and returns whether it holds a library. Returns the
    wheel's file name."""
    version = _version()
    library = _library(version)
    tag = _tag(library)
    name = f"{NAME}-{version}-{tag}.whl"
    tmp = os.path.join(wheel_directory, name + ".part")
    whl = _Wheel(tmp)
    try:
        contents(whl, library)
        whl.close(_write_dist_info(whl, version, tag, library is None))
    except BaseException:
        whl.zip.close()
        os.unlink(tmp)
        raise
    os.replace(tmp, os.path.join(wheel_directory, name))
    return name


def _package_files(whl, library):
    for module in _modules():
        whl.add(f"{NAME}/{module}", _read(os.path.join(PACKAGE, module)))
    if library is not None:
        whl.add(f"{NAME}/{SONAME}", _read(library), mode=0o755)


def _editable_files(whl, library):
    # the source folder on sys.path: edits show without reinstalling; the
    # library is found in the checkout's build/ (onnxconvert/_find.py)
    whl.add(f"__editable__.{NAME}.pth", (SOURCE + "\n").encode())


# ---- the PEP 517 / PEP 660 hooks ------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    di = os.path.join(metadata_directory, _dist_info(version))
    os.makedirs(di, exist_ok=True)
    tag = _tag(_library(version))
    for name, text in (("METADATA", _metadata(version)),
                       ("WHEEL", _wheel_file(tag, tag == "py3-none-any")),
                       ("top_level.txt", f"{NAME}\n")):
        with open(os.path.join(di, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info(version)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, _package_files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, _editable_files)


def build_sdist(sdist_directory, config_settings=None):
    """python/ as NAME-VERSION.tar.gz, with a PKG-INFO that carries the
    version (the header is not in it). No library: a wheel built from the
    sdist is pure and finds the installed library."""
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"
    files = ["pyproject.toml", "_backend/oc_build.py"] + [f"{NAME}/{m}" for m in _modules()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            tar.add(os.path.join(SOURCE, rel), arcname=f"{base}/{rel}", filter=_tar_clean)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(version).encode()
        info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
        tar.addfile(info, io.BytesIO(data))
    return name


def _tar_clean(info):
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
