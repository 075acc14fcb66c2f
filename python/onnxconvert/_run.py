"""run() and Session (stub: the evaluation work replaces it)."""


def run(model, inputs, *, seed=None, max_memory=None, max_steps=None, timeout=None):
    """Not written yet."""
    raise NotImplementedError


class Session:
    """Not written yet."""

    def __init__(self, model):
        raise NotImplementedError
