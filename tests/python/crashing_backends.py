"""Python kernels that crash, hang or decline, as 'module:function' backends for opval.run's
Python worker process (tests/python/test_runner.py)."""
import ctypes
import time

import numpy as np

import opval


def _segfault(x):
    ctypes.string_at(0)  # reads address 0: SIGSEGV
    return x


def _hang(x):
    time.sleep(3600)
    return x


def _relu(x):
    return np.maximum(x, np.float32(0))


def segfault_backend():
    return opval.kernel_backend("relu", _segfault, contracts="f32", name="segfault")


def hang_backend():
    return opval.kernel_backend("relu", _hang, contracts="f32", name="hang")


def relu_backend():
    return opval.kernel_backend("relu", _relu, contracts="f32", name="relu")


def _declines(x):
    raise opval.Unsupported(f"relu of {x.size} elements declined at run time")


def declining_backend():
    return opval.kernel_backend("relu", _declines, contracts="f32", name="declining")
