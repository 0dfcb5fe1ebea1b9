"""hermetic's handle for Python programs under test.

    import hermetic
    h = hermetic.current()          # None unless enrolled (hermetic enroll -- ...)
    h.seed, h.lineage, h.scope
    h.clock.now()                   # aware UTC datetime, without a tick
    h.clock.advance(60)             # seconds (or a timedelta)
    h.clock.set("2030-01-01T00:00:00Z")   # alias move_to; epoch seconds too
    h.real.time(), h.real.urandom(16)     # the real clock and entropy
    h.allow_network("db.test", 5432)      # raises unless the run allows it

    with hermetic.sandbox("checkout"):    # or @hermetic.sandbox(seed=7)
        ...   # clock at --now, streams keyed by (seed, name): same values
              # whatever ran before in this process

Every process of a run shares one virtual clock; inside a scope, moving the
clock moves this process's clock (and that of the processes it starts from
then on), not the run's.
"""
import contextlib
import datetime as _dt
import functools
import os
import random as _random
import sys

from . import _shim

__all__ = ["current", "sandbox", "Handle", "HermeticError", "NotEnrolled", "NetworkNotAllowed"]
__version__ = "0.1.0"

CLOCK_REALTIME, CLOCK_MONOTONIC = 0, 1
SCOPE_PASSED, SCOPE_FAILED, SCOPE_SKIPPED = 1, 2, 3
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class HermeticError(RuntimeError):
    """A hermetic operation failed."""


class NotEnrolled(HermeticError):
    """The process does not run under hermetic's shim."""


class NetworkNotAllowed(HermeticError):
    """The run does not let this destination through."""


ENROLL_HINT = ("run it under hermetic: 'hermetic enroll -- COMMAND' "
               "(for pytest: 'pytest --hermetic-all' enrolls itself)")


def _ns(when):
    """ns since the epoch from an ISO 8601 string, epoch seconds or a datetime."""
    if isinstance(when, _dt.datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        d = when - _EPOCH
        return (d.days * 86400 + d.seconds) * 10**9 + d.microseconds * 1000
    if isinstance(when, _dt.date):
        return _ns(_dt.datetime(when.year, when.month, when.day))
    if isinstance(when, (int, float)):
        return int(round(when * 10**9))
    if isinstance(when, str):
        s = when.strip()
        if s.startswith("@"):
            return _ns(float(s[1:]))
        if s.endswith("Z") or s.endswith("z"):
            s = s[:-1] + "+00:00"
        try:
            return _ns(_dt.datetime.fromisoformat(s))
        except ValueError:
            raise ValueError("not a time: %r (ISO 8601 like 2030-01-01T00:00:00Z, or epoch seconds)"
                             % (when,)) from None
    raise TypeError("a time is an ISO 8601 string, epoch seconds or a datetime, not %r" % (when,))


class Clock:
    """The run's virtual clock (inside a scope: this process's)."""

    def now(self):
        """Virtual realtime as an aware UTC datetime; does not count as a reading."""
        ns = _need().hermetic_shim_now_ns()
        return _EPOCH + _dt.timedelta(microseconds=ns // 1000)

    def advance(self, seconds):
        """Move the clock forward (seconds >= 0, or a timedelta)."""
        if isinstance(seconds, _dt.timedelta):
            seconds = seconds.total_seconds()
        if seconds < 0:
            raise ValueError("the clock only moves forward (advance(%r))" % (seconds,))
        _shim.check(_need().hermetic_shim_advance_ns(int(round(seconds * 10**9))),
                    "advancing the clock (is the virtual clock off?)")

    def set(self, when):
        """Set virtual realtime (ISO 8601, epoch seconds or a datetime);
        monotonic time follows forwards, never back."""
        _shim.check(_need().hermetic_shim_set_now_ns(_ns(when)),
                    "setting the clock (is the virtual clock off?)")

    move_to = set


class Real:
    """The real world, for the one call that needs it."""

    def time(self):
        return _shim.real_time(CLOCK_REALTIME)

    def monotonic(self):
        return _shim.real_time(CLOCK_MONOTONIC)

    def urandom(self, n):
        return _shim.real_urandom(n)


class Handle:
    """The run this process is enrolled in (hermetic.current())."""

    def __init__(self):
        self.clock = Clock()
        self.real = Real()

    @property
    def seed(self):
        """The run's seed; inside a scope, the scope's."""
        return _need().hermetic_shim_seed()

    @property
    def base_seed(self):
        """The run's own seed, in or out of scopes (from the shim: the seed is
        in the run's clock page, not in the environment)."""
        return _need().hermetic_shim_base_seed()

    @property
    def lineage(self):
        return _need().hermetic_shim_lineage().decode()

    @property
    def scope(self):
        """The innermost scope's name, or None."""
        n = _need().hermetic_shim_scope_name()
        return n.decode("utf-8", "surrogateescape") if n is not None else None

    @property
    def network(self):
        """'block' (only loopback, unix sockets and --allow'ed hosts), 'audit' (nothing refused, what block would refuse reported) or 'off'."""
        return os.environ.get("HERMETIC_NETWORK", "block")

    def scope_seed(self, name, base=None):
        """The seed a scope named name gets under base (default: the current seed)."""
        return _need().hermetic_shim_scope_seed(self.seed if base is None else base,
                                                 _name_bytes(name))

    def allow_network(self, host=None, port=None):
        """Check that the run lets traffic to host[:port] through (the kernel
        decides for the whole run: enroll with --network off or --allow)."""
        if self.network == "off":
            return True
        allowed = [h for h in os.environ.get("HERMETIC_DNS_ALLOW", "").split(",") if h]
        h = (host or "").lower().rstrip(".")
        if host is not None and (h in allowed or host in ("localhost", "127.0.0.1", "::1") or
                                 any(a.startswith("*.") and h.endswith(a[1:]) and len(h) > len(a) - 1
                                     for a in allowed)):
            return True
        what = "%s%s" % (host or "the network", ":%s" % port if port else "")
        raise NetworkNotAllowed(
            "this run blocks %s; the network is the run's to open: enroll with "
            "'--allow %s' (or '--network off')" % (what, "%s:%s" % (host, port) if host and port else host or "HOST[:PORT]"))

    def __repr__(self):
        return "<hermetic.Handle seed=%d lineage=%s scope=%r>" % (self.seed, self.lineage, self.scope)


def _need():
    l = _shim.lib()
    if l is None:
        raise NotEnrolled("this process is not enrolled in a hermetic run; " + ENROLL_HINT)
    return l


def current():
    """The run's handle, or None when the process is not enrolled."""
    return Handle() if _shim.lib() is not None else None


def _name_bytes(name):
    b = name.encode("utf-8", "surrogateescape")
    if not b or len(b) >= 512 or any(c < 0x20 or c == 0x7f for c in b):
        raise ValueError("a scope name is 1..511 bytes without control characters: %r" % (name,))
    return b


def enter_scope(name, seed=None, now=None):
    """Enter a scope (prefer sandbox()). Python's random module is reseeded
    from the scope's stream; returns what leave_scope needs."""
    import ctypes
    l = _shim.lib()
    if l is None:
        raise NotEnrolled("hermetic.sandbox(%r) needs a process enrolled in a hermetic run; %s"
                          % (name, ENROLL_HINT))
    s = ctypes.c_uint64(int(seed)) if seed is not None else None
    n = ctypes.c_int64(_ns(now)) if now is not None else None
    _shim.check(l.hermetic_shim_scope_enter(_name_bytes(name), ctypes.byref(s) if s is not None else None,
                                            ctypes.byref(n) if n is not None else None),
                "entering scope %r" % (name,))
    state = _random.getstate()
    _random.seed()  # from os.urandom: the scope's stream
    return state


def leave_scope(token, status=SCOPE_PASSED):
    l = _need()
    _random.setstate(token)
    _shim.check(l.hermetic_shim_scope_leave(status), "leaving the scope")


class sandbox(contextlib.ContextDecorator):
    """Run a block (with) or a function (decorator) in a scope of its own: the
    clock starts at the run's --now (or now=), entropy is keyed by (seed,
    name); name defaults to the function's qualified name or the caller's
    file:line, seed to one derived from the run's seed and the name."""

    def __init__(self, name=None, *, seed=None, now=None):
        self.name, self.seed, self.now = name, seed, now
        self._explicit = name is not None
        self._tokens = []
        if name is None:
            f = sys._getframe(1)
            self.name = "%s:%d" % (os.path.relpath(f.f_code.co_filename), f.f_lineno)

    def __call__(self, func):
        name = self.name if self._explicit else "%s.%s" % (func.__module__, func.__qualname__)

        @functools.wraps(func)
        def inner(*args, **kwargs):
            with sandbox(name, seed=self.seed, now=self.now):
                return func(*args, **kwargs)
        return inner

    def __enter__(self):
        self._tokens.append(enter_scope(self.name, self.seed, self.now))
        return current()

    def __exit__(self, et, ev, tb):
        status = SCOPE_PASSED if et is None else SCOPE_FAILED
        leave_scope(self._tokens.pop(), status)
        return False
