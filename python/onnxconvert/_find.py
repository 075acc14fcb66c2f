"""Where the C library is: find_library() returns the path (or soname) of
libonnxconvert.so.0 to load, the first of:

1. $ONNXCONVERT_LIBRARY, when set and not empty (taken as given);
2. next to the package: onnxconvert/libonnxconvert.so.0, which a wheel
   built in a checkout after `make` carries;
3. the LIBDIR of `make install`, which writes it into onnxconvert/_libdir.py
   beside the package it installs (so no LD_LIBRARY_PATH or ldconfig is
   needed for a PREFIX outside the loader's folders);
4. the checkout's build/ (python/onnxconvert/../../build), when the package
   is imported from a source tree (PYTHONPATH=python, or an editable
   install);
5. the soname alone, for the loader's own search (LD_LIBRARY_PATH, the
   ldconfig cache, the system folders): a pure wheel, or the library
   installed by a distribution.
"""
import os

SONAME = "libonnxconvert.so.0"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed_libdir():
    """The LIBDIR `make install` wrote beside the package, or None."""
    try:
        from ._libdir import LIBDIR
    except ImportError:
        return None
    return LIBDIR


def candidates():
    """The paths tried by find_library(), in its order (without the last
    resort, the bare soname)."""
    out = [os.path.join(_HERE, SONAME)]
    libdir = _installed_libdir()
    if libdir:
        out.append(os.path.join(libdir, SONAME))
    out.append(os.path.normpath(os.path.join(_HERE, "..", "..", "build", SONAME)))
    return out


def find_library():
    """The path or soname of libonnxconvert to load (the module's docstring
    gives the order)."""
    env = os.environ.get("ONNXCONVERT_LIBRARY")
    if env:
        return env
    for path in candidates():
        if os.path.isfile(path):
            return path
    return SONAME
