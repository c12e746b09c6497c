"""What the grade cannot see, flagged beside it: an answer cell that uses or copies mlnn's own
routine for its exercise, and a locked cell changed or deleted.

The grade itself comes from the answer's behaviour in a process of its own
(:mod:`mlnn.course.answers`), where nothing of the graders can be reached; what is left to read
is whether the behaviour is the student's:

* ``library``: the cell names a routine of its exercise's ``reaches``
  (:mod:`mlnn.course.registry`), through its imports and aliases, or by its final name under an
  imported module (``from mlnn.paper import ranks as r; r.average_ranks``);
* ``copied``: a definition of the cell whose tokens match those of such a routine's source by
  :data:`SIMILAR` or more (names and layout changed or not);
* ``introspection``: the cell reaches objects it was not given, through Python's internals
  (``__subclasses__``, ``__globals__``, ``sys.modules``, ``gc``, ...) or by names it builds
  (``getattr``, ``eval``, ``exec``): the way to a loaded routine that no import allows;
* ``locked``: a locked cell of the release changed or missing (grading never runs it).

A flag is a reason to read the cell, not a verdict.
"""

import ast
import difflib
import functools
import importlib
import inspect
import io
import tokenize

#: The share of matching tokens above which a definition counts as a copy.
SIMILAR = 0.8

#: Definitions shorter than this many tokens are never called copies.
SHORTEST = 40


def dotted(node, aliases):
    """The dotted name an expression stands for through the cell's imports, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id, node.id)
    return ".".join([root, *reversed(parts)])


def imports(tree):
    """{name bound: dotted module or object} of every import in ``tree``."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                    a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def library_names(tree, reaches):
    """The routines of ``reaches`` the cell names."""
    aliases, found = imports(tree), []
    imported = set(aliases)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        name = dotted(node, aliases)
        if name is None:
            continue
        for reach in reaches:
            by_path = name == reach or name.startswith(reach + ".")
            by_final = name.split(".")[-1] == reach.split(".")[-1] and \
                name.split(".")[0] in {aliases.get(n, n).split(".")[0] for n in imported}
            if (by_path or by_final) and reach not in found:
                found.append(reach)
    return found


#: What an answer never needs, and what reaches objects it was not given.
INTROSPECTION = frozenset({
    "__subclasses__", "__globals__", "__closure__", "__code__", "__builtins__", "__import__",
    "__dict__", "__mro__", "__bases__", "__base__", "__loader__", "__spec__", "gc", "sys",
    "inspect", "importlib", "builtins", "getattr", "setattr", "vars", "globals", "locals",
    "eval", "exec", "compile"})


def introspection(tree):
    """The names of :data:`INTROSPECTION` the cell uses: as names, attributes, imports, or
    (the dunders) inside strings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(a.name.split(".")[0] for a in node.names)
            found.add((getattr(node, "module", None) or "").split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(w for w in INTROSPECTION if w.startswith("__") and w in node.value)
    return sorted(found & INTROSPECTION)


def tokens(source):
    """The token strings of Python ``source`` (comments and layout dropped)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type not in skip and t.type != tokenize.STRING]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


@functools.lru_cache(maxsize=None)
def library_tokens(reach):
    """The tokens of the source of the routine ``reach`` names ([] if not mlnn's or not found)."""
    module, _, name = reach.rpartition(".")
    if not module.startswith("mlnn"):
        return []
    try:
        return tokens(inspect.getsource(getattr(importlib.import_module(module), name)))
    except (ImportError, AttributeError, TypeError, OSError):
        return []


def copies(tree, source, reaches):
    """The routines of ``reaches`` whose source one of the cell's definitions copies."""
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        body = tokens(ast.get_source_segment(source, node) or "")
        for reach in reaches:
            theirs = library_tokens(reach)
            if min(len(body), len(theirs)) >= SHORTEST and difflib.SequenceMatcher(
                    None, body, theirs, autojunk=False).ratio() >= SIMILAR:
                found.append(reach)
    return found


def answer_flags(source, reaches):
    """``[(kind, detail), ...]`` for one answer cell's ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    flags = [("library", reach) for reach in library_names(tree, reaches)]
    flags += [("introspection", name) for name in introspection(tree)]
    return flags + [("copied", f"{reach} (a definition matching its source)")
                    for reach in copies(tree, source, reaches)]


def locked_flags(released, submitted):
    """``[(kind, detail), ...]`` for the locked cells of the release (grade id → source) that
    the submission (grade id → source) changed or lacks."""
    return [("locked", f"{grade_id} {'changed' if grade_id in submitted else 'deleted'}")
            for grade_id, source in released.items() if submitted.get(grade_id) != source]
