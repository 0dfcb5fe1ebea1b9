"""The shim's functions (include/hermetic/hermetic.h, hermetic_shim_*), found
in the process with ctypes; None of them when the process is not enrolled."""
import ctypes
import os

_lib = None


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def lib():
    """The process's symbols if hermetic's shim is loaded and active, else None."""
    global _lib
    if _lib is None:
        try:
            handle = ctypes.CDLL(None)
            active = handle.hermetic_shim_active
        except (OSError, AttributeError):
            _lib = False
            return None
        active.restype = ctypes.c_int
        u64, i64 = ctypes.c_uint64, ctypes.c_int64
        sig = {
            "hermetic_shim_seed": (u64, []),
            "hermetic_shim_base_seed": (u64, []),
            "hermetic_shim_lineage": (ctypes.c_char_p, []),
            "hermetic_shim_now_ns": (i64, []),
            "hermetic_shim_advance_ns": (ctypes.c_int, [i64]),
            "hermetic_shim_set_now_ns": (ctypes.c_int, [i64]),
            "hermetic_shim_real_clock_gettime": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(_Timespec)]),
            "hermetic_shim_real_getrandom": (ctypes.c_ssize_t, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]),
            "hermetic_shim_scope_enter": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(u64), ctypes.POINTER(i64)]),
            "hermetic_shim_scope_leave": (ctypes.c_int, [ctypes.c_int]),
            "hermetic_shim_scope_name": (ctypes.c_char_p, []),
            "hermetic_shim_scope_seed": (u64, [u64, ctypes.c_char_p]),
        }
        for name, (res, args) in sig.items():
            f = getattr(handle, name)
            f.restype, f.argtypes = res, args
        _lib = handle if active() else False
    return _lib or None


def check(rc, what):
    """Raise for a -errno return."""
    if rc < 0:
        raise OSError(-rc, "%s: %s" % (what, os.strerror(-rc)))
    return rc


def real_time(clock_id):
    ts = _Timespec()
    l = lib()
    if l is None:
        import time
        return time.clock_gettime(clock_id)
    if l.hermetic_shim_real_clock_gettime(clock_id, ctypes.byref(ts)) != 0:
        raise OSError(ctypes.get_errno(), "clock_gettime")
    return ts.tv_sec + ts.tv_nsec / 1e9


def real_urandom(n):
    l = lib()
    if l is None:
        return os.urandom(n)
    buf = ctypes.create_string_buffer(n)
    got = 0
    while got < n:
        r = l.hermetic_shim_real_getrandom(ctypes.addressof(buf) + got, n - got, 0)
        if r < 0:
            raise OSError(ctypes.get_errno(), "getrandom")
        got += r
    return buf.raw
