"""The errors the package raises and the diagnostic they carry.

Every failure of the C library reaches Python as one of these: nothing is
printed. The attributes are those of the command line's JSON "error" object
(docs/json.md), so a script can branch on `reason` or `stage` instead of
parsing the message.
"""
from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class Diagnostic:
    """One finding or refusal.

    stage: where it happened ("load", "check", "convert", "optimize",
    "verify", "run", ...); reason: a short key (the converter's reason, the
    checker's rule, "differs", ...); node, op, domain: the node to blame
    when there is one; step: the opset step (from, to) a refusal happened
    at, else None; message: the one-line message. For a finding of check(),
    rule is the checker's rule and severity "error" or "warning".
    """
    stage: Optional[str] = None
    reason: Optional[str] = None
    node: Optional[str] = None
    op: Optional[str] = None
    domain: Optional[str] = None
    step: Optional[Tuple[int, int]] = None
    message: str = ""
    rule: Optional[str] = None
    severity: Optional[str] = None

    def __str__(self):
        return self.message


class OnnxConvertError(Exception):
    """The base of every error of this package.

    Carries the Diagnostic's fields as attributes (stage, reason, node, op,
    domain, step, message) and the Diagnostic itself as `diagnostic`;
    str(error) is the one-line message.
    """

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.stage = diagnostic.stage
        self.reason = diagnostic.reason
        self.node = diagnostic.node
        self.op = diagnostic.op
        self.domain = diagnostic.domain
        self.step = diagnostic.step
        self.message = diagnostic.message

    def __str__(self):
        return self.message


class ConversionError(OnnxConvertError):
    """A conversion, optimization, verification or evaluation that could not
    be done exactly: the model was valid, the operation was refused."""


class InvalidModelError(OnnxConvertError):
    """The model could not be read, or the checker refused it."""


class UsageError(OnnxConvertError, ValueError):
    """The arguments are wrong (an unknown pass, an opset out of range,
    an input of the wrong type); nothing was done."""


def usage(message: str) -> UsageError:
    """A UsageError with just a message."""
    return UsageError(Diagnostic(stage="usage", reason="usage", message=message))
