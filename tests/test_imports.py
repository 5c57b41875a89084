"""The package's imports form no cycle (graph.py must not reach back into io/, ...)."""
import ast
from pathlib import Path

import matchpart

PACKAGE = Path(matchpart.__file__).resolve().parent


def module_names():
    """'matchpart.x.y' -> path, for every module of the package."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(name, path, modules, in_functions=False):
    """The package modules that ``name`` imports: when it is imported (import statements
    outside functions, also inside if/try at module level), plus, with ``in_functions``, those
    that its functions import when called. Resolved to modules of the package."""
    is_package = path.name == "__init__.py"
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not in_functions:
                continue  # runs later, when called
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in modules)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:  # "from pkg import sub" imports the submodule
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in modules else target)
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in modules and m != name}


def find_cycle(graph):
    """A list of modules forming a cycle, or None (depth-first search)."""
    state, stack = {}, []

    def dfs(u):
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == "open":
                return stack[stack.index(v):] + [v]
            if v not in state:
                cycle = dfs(v)
                if cycle:
                    return cycle
        state[u] = "done"
        stack.pop()
        return None

    for u in sorted(graph):
        if u not in state:
            cycle = dfs(u)
            if cycle:
                return cycle
    return None


def import_graph(in_functions=False):
    modules = module_names()
    return {name: imports_of(name, path, modules, in_functions) for name, path in modules.items()}


def test_no_import_cycles_in_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_cycles_through_deferred_imports_either():
    # an import inside a function hides a cycle from Python but not from the reader of the
    # code (graph -> io -> generators -> graph was one). Allowed: a module of a package calling
    # its own package's front door (io.convert's as_graph uses matchpart.io.load_graph).
    graph = import_graph(in_functions=True)
    graph = {name: {m for m in deps if not name.startswith(m + ".")} for name, deps in graph.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_graph_module_does_not_import_io():
    graph = import_graph()
    assert "matchpart.io" not in graph["matchpart.graph"]
    assert graph["matchpart.io.convert"] >= {"matchpart.graph"}


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
