"""Where the shared library is (stub: the packaging work replaces it)."""
import os


def find_library():
    """The path or soname of libonnxconvert to load."""
    env = os.environ.get("ONNXCONVERT_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "libonnxconvert.so.0"),
                 os.path.join(here, "..", "..", "build", "libonnxconvert.so.0")):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return "libonnxconvert.so.0"
