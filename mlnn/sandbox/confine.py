"""What the operating system enforces on the student's process before any of its code runs.

:func:`confine`, in this order: resource limits (address space, CPU seconds, file size, open
files, no core dumps; and no new processes once privileges are dropped), no new privileges, the
privileges of ``nobody`` when it runs as root, then Landlock (Linux 5.13 and later): no file
may be read, written, run or created anywhere but the process's own empty working directory;
and, where the kernel has them, no TCP connections or listening ports, no signals to and no
abstract sockets of processes outside. Each is a kernel rule: nothing the process does later
lifts it. :func:`landlock_abi` says whether the kernel has Landlock (0: no).
"""

import ctypes
import os
import resource

#: The syscall numbers of Landlock on x86-64 and arm64 (the same on both).
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1
#: The file-system access rights of each Landlock ABI version (a bit each).
FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
#: What the working directory allows: everything of the ABI's rights.
NOBODY = 65534


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi():
    """The kernel's Landlock ABI version, 0 if it has none (or the call is not allowed)."""
    try:
        version = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def fs_rights(abi):
    return FS_RIGHTS[max(v for v in FS_RIGHTS if v <= abi)]


def landlock(directory, abi):
    """Restrict this process and its future children, irrevocably: files only beneath
    ``directory``; no TCP bind or connect (ABI 4); no signals or abstract unix sockets
    beyond this domain (ABI 6). Raises OSError if the kernel refuses."""
    libc, rights = _libc(), fs_rights(abi)
    attr = RulesetAttr(rights, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        fd = os.open(directory, os.O_PATH | os.O_DIRECTORY)
        try:
            rule = PathBeneath(rights, fd)
            if libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule),
                            ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
        finally:
            os.close(fd)
        if libc.syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def address_space():
    """This process's virtual memory size in bytes (``VmSize``)."""
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def confine(directory, memory, cpu, abi):
    """Confine this process (see the module's docstring): ``memory`` bytes of address space
    beyond what it has now, ``cpu`` seconds, files only in ``directory``. Returns what was
    enforced, as words for the report."""
    enforced = [f"{memory / 2 ** 20:.0f} MiB", f"{cpu:.0f} s CPU"]
    limit = address_space() + int(memory)
    for which, value in ((resource.RLIMIT_AS, limit), (resource.RLIMIT_CPU, int(cpu) + 1),
                         (resource.RLIMIT_FSIZE, 16 << 20), (resource.RLIMIT_NOFILE, 64),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (value, value))
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if os.geteuid() == 0:
        os.chown(directory, NOBODY, NOBODY)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        enforced.append("user nobody, no new processes")
    if abi:
        landlock(directory, abi)
        enforced.append(f"Landlock ABI {abi}: files only in its own folder"
                        + (", no network" if abi >= 4 else ""))
    else:
        enforced.append("no Landlock in this kernel: files readable as its user")
    return enforced
