"""The architecture, pinned: data flows one way, and the command line is a shell over the library.

The import graph of the package is read from the source with :mod:`ast` (imports at module level
and inside functions alike), so a cycle cannot hide behind an import postponed into a function.
"""

import ast
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mlnn"

#: The commands ``python -m mlnn --help`` must list.
COMMANDS = ("data", "train", "evaluate", "predict", "reproduce", "bench", "experiment")

#: The most lines a function may span: short functions, each readable on one screen.
MAX_FUNCTION_LINES = 60


def _module_names():
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    return names


MODULES = _module_names()


def _targets(node):
    """The mlnn modules an Import / ImportFrom node brings in."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name.split(".")[0] == "mlnn"}
    if node.module is None or node.level or node.module.split(".")[0] != "mlnn":
        return set()
    found = set()
    for alias in node.names:
        candidate = f"{node.module}.{alias.name}"
        found.add(candidate if candidate in MODULES else node.module)
    return found


def _imports(path):
    """({module-level mlnn imports}, {function-level mlnn imports}) of one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top, nested = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            (top if node in tree.body else nested).update(_targets(node))
    for node in tree.body:      # imports under a module-level if/try still run at import time
        if isinstance(node, (ast.If, ast.Try)):
            for child in ast.walk(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)) and _targets(child):
                    top.update(_targets(child))
                    nested.difference_update(_targets(child))
    return top, nested


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _edges(name):
    top, nested = GRAPH[name]
    return {target for target in top | nested if target != name}


def test_the_graph_sees_the_package():
    assert {"mlnn.nn.network", "mlnn.cli", "mlnn.cli.model", "mlnn.paper.reproduce",
            "mlnn.datasets.registry", "mlnn.model.estimator",
            "mlnn.model.modelfile"} <= set(MODULES)
    assert "mlnn.nn.network" in _edges("mlnn.model.builders")
    assert "mlnn.datasets.paths" in _edges("mlnn.datasets.registry")


def test_every_imported_mlnn_module_exists():
    for name in MODULES:
        for target in _edges(name):
            assert target in MODULES, f"{name} imports {target}, which is not a module"


def _find_cycle(edges):
    """A list of modules forming an import cycle in ``edges`` (name -> set of names), or None."""
    state = {}

    def visit(name, stack):
        state[name] = "open"
        for target in sorted(edges.get(name, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target, stack + [target])
                if found:
                    return found
        state[name] = "done"
        return None

    for name in sorted(edges):
        if name not in state:
            found = visit(name, [name])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycles():
    cycle = _find_cycle({name: _edges(name) for name in MODULES})
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


#: The imports postponed into a function: the package's front page imports its estimator on
#: first use, so that ``python -m mlnn`` holds back Ctrl-C before NumPy loads; the course's
#: front page its graders (so that an answer's process can load mlnn's pieces without them);
#: the course command its tools.
LAZY = {"mlnn": {"mlnn.model.estimator"},
        "mlnn.course": {"mlnn.course.answers", "mlnn.course.pieces"},
        "mlnn.cli.course": {"mlnn.tools.nbgrader_course", "mlnn.tools.course_grade",
                            "mlnn.tools.course_bench"}}


def test_no_function_level_imports_of_mlnn_modules():
    offenders = {name: sorted(GRAPH[name][1]) for name in MODULES
                 if GRAPH[name][1] and GRAPH[name][1] != LAZY.get(name)}
    assert not offenders, offenders


def _function_lengths(path, module):
    """{"module.qualified_name": number of lines} for every function and method of one file."""
    lengths = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = child.end_lineno - child.lineno + 1
                visit(child, name)

    visit(ast.parse(path.read_text(encoding="utf-8")), module)
    return lengths


def test_the_length_finder_counts_decorators_out_and_nests_names(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("class A:\n    @staticmethod\n    def f():\n        def g():\n"
                    "            return 1\n        return g\n", encoding="utf-8")
    assert _function_lengths(path, "m") == {"m.A.f": 4, "m.A.f.g": 2}


def test_functions_are_short():
    lengths = {}
    for name, path in MODULES.items():
        lengths.update(_function_lengths(path, name))
    long = {name: n for name, n in lengths.items() if n > MAX_FUNCTION_LINES}
    assert not long, long


def test_nothing_outside_the_command_line_imports_it():
    for name in MODULES:
        if name.startswith("mlnn.cli") or name == "mlnn.__main__":
            continue
        assert not {t for t in _edges(name) if t.startswith("mlnn.cli")}, name


def test_argparse_only_in_the_command_line():
    for name, path in MODULES.items():
        if not name.startswith("mlnn.cli"):
            assert "argparse" not in path.read_text(encoding="utf-8"), name


#: The architecture: each folder of the package and the folders it may import from. Read bottom
#: up: plumbing; the predictor and measures, the datasets and the SVM baseline beside it; the
#: paper's network; the model a user fits and saves; then what is built on the model (the paper's
#: Table 3, the figures, the benchmarks), the course, and the command line on top.
LAYERS = {
    "base": set(),
    "evaluation": {"base"},
    "datasets": {"base"},
    "baselines": {"base"},
    "nn": {"base", "evaluation"},
    "model": {"base", "evaluation", "datasets", "nn"},
    "paper": {"base", "evaluation", "baselines", "model", "mlnn"},
    "figures": {"base", "datasets", "model", "nn"},
    "sandbox": {"base"},
    "tools": {"base", "baselines", "datasets", "model", "nn", "course", "sandbox"},
    "course": {"base", "evaluation", "datasets", "baselines", "nn", "model", "paper", "figures",
               "sandbox"},
    "cli": {"base", "baselines", "datasets", "evaluation", "figures", "model", "paper", "tools"},
    "__main__": {"base", "cli"},
    "mlnn": {"base", "model"},
}


def _folder(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "mlnn"


def test_every_folder_has_a_layer():
    assert {_folder(name) for name in MODULES} == set(LAYERS)


def test_the_layer_finder_names_folders():
    assert _folder("mlnn.nn.network") == "nn"
    assert _folder("mlnn") == "mlnn"
    assert _folder("mlnn.__main__") == "__main__"


def test_each_folder_imports_only_the_layers_below_it():
    for name in MODULES:
        below = LAYERS[_folder(name)] | {_folder(name)}
        upward = sorted(t for t in _edges(name) if _folder(t) not in below)
        assert not upward, f"{name} imports {upward}, above its layer"


def test_model_files_are_arrays_to_file_only():
    # model files are arrays <-> file: only the error types and the atomic writer below them
    assert _edges("mlnn.model.modelfile") <= {"mlnn.base.errors", "mlnn.base.fileio"}
    assert _edges("mlnn.base.fileio") <= {"mlnn.base.errors"}


def test_every_command_module_is_registered():
    from mlnn.cli import COMMANDS              # imported by name, when their command runs
    registered = {f"mlnn.cli.{module}" for module, _ in COMMANDS.values()}
    modules = {name for name in MODULES if name.startswith("mlnn.cli.")} - {"mlnn.cli.options"}
    assert registered == modules


def test_help_lists_every_command():
    result = subprocess.run([sys.executable, "-m", "mlnn", "--help"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0] for line in result.stdout.splitlines()
              if line.startswith("    ") and line.split()}
    assert set(COMMANDS) <= listed, result.stdout


#: Calls that write a file given a path or an open handle (by their module, None: any
#: object's method); :func:`_plain_writes` allows them only on a handle of ``atomic_write``.
HANDLE_WRITERS = {"save": "np", "savez": "np", "savez_compressed": "np", "dump": "json",
                  "savefig": None, "tofile": None}

#: Where files are opened for writing on purpose: the atomic writer itself, and the lock file,
#: whose creation must be exclusive (a hard link or O_EXCL), which a rename over it is not.
WRITERS = {"mlnn/base/fileio.py", "mlnn/base/lock.py"}



def _plain_writes(path):
    """The lines of ``path`` that write a file without :mod:`mlnn.base.fileio`: Path.write_text
    or write_bytes, open(..., "w"/"a"/"x"), or np.save/savez/savefig/json.dump/tofile on
    anything but a handle bound by ``with atomic_write(...) as handle``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    atomic = {id(call) for node in ast.walk(tree) if isinstance(node, ast.With)
              for item in node.items if isinstance(item.optional_vars, ast.Name)
              and "atomic_write" in ast.unparse(item.context_expr)
              for statement in node.body for call in ast.walk(statement)
              if isinstance(call, ast.Call) and _written(call) == item.optional_vars.id}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else \
            getattr(node.func, "id", None)
        if isinstance(node.func, ast.Attribute) and name in ("write_text", "write_bytes"):
            found.append(node.lineno)
        elif name == "open" and isinstance(node.func, ast.Name):
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                found.append(node.lineno)
        elif _writer(node) and id(node) not in atomic:
            found.append(node.lineno)
    return sorted(found)


def _writer(call):
    """Whether ``call`` is one of :data:`HANDLE_WRITERS` (``np.savez``, ``fig.savefig``, ...)."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in HANDLE_WRITERS:
        return False
    module = HANDLE_WRITERS[call.func.attr]
    return module is None or getattr(call.func.value, "id", None) in (module, "numpy")


def _written(call):
    """The name of what a :data:`HANDLE_WRITERS` call writes to (json.dump's second argument,
    the others' first), or None."""
    position = 1 if getattr(call.func, "attr", None) == "dump" else 0
    if _writer(call) and len(call.args) > position and isinstance(call.args[position], ast.Name):
        return call.args[position].id
    return None


def test_the_plain_write_finder_finds_plain_writes(tmp_path):
    source = tmp_path / "writer.py"
    source.write_text(
        "def f(path, fig, arrays, run):\n"
        "    path.write_text('x')\n"
        "    with open(path, 'w') as handle:\n"
        "        json.dump(run, handle)\n"
        "    np.savez(path, **arrays)\n"
        "    with atomic_write(path, 'wb') as handle:\n"
        "        fig.savefig(handle)\n"
        "    with open(path, 'rb') as handle:\n"
        "        handle.read()\n")
    assert _plain_writes(source) == [2, 3, 4, 5]


def test_every_file_is_written_through_the_atomic_writer():
    writes = {path.relative_to(ROOT).as_posix(): _plain_writes(path)
              for path in sorted(PACKAGE.rglob("*.py"))}
    plain = {name: lines for name, lines in writes.items() if lines and name not in WRITERS}
    assert not plain, plain
