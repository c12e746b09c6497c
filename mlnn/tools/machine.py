"""What a measurement ran on: cores, CPU, library versions, BLAS, and the process's peak memory."""

import contextlib
import os
import platform
import resource
import sys

import numpy as np
import scipy

#: Environment variables that set the BLAS thread count; the report shows the ones that are set.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def machine_info():
    threads = {name: os.environ[name] for name in THREAD_VARIABLES if name in os.environ}
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "blas": blas_info(),
            "thread_settings": threads}


def cpu_model():
    """The CPU's model name from ``/proc/cpuinfo``, else what :mod:`platform` knows."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def blas_info():
    """The BLAS library (and its thread count, from threadpoolctl when it is installed)."""
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info   # optional: imported only where available
        pools = [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]
        if pools:
            return "; ".join(f"{pool.get('internal_api')} {pool.get('version')} "
                             f"({pool.get('num_threads')} threads)" for pool in pools)
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:     # numpy < 1.25 has no mode="dicts"; the BLAS name is then not reported
        return "unknown"


def peak_rss_mb():
    """The peak resident set size of this process so far, in MiB (``ru_maxrss``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10   # bytes on macOS, KiB else
