"""Exception types: every error a user can cause is a MatchpartError with a one-line message."""


class MatchpartError(Exception):
    """Base class for errors caused by input or configuration (shown as one line by the CLI)."""


# What can be wrong with a graph (GraphError.kind). Readers turn an error about vertices into
# one about file lines by its kind and vertices, never by reading its message.
GRAPH_ERROR_KINDS = (
    "parse",            # a file's text is not the format (bad token, wrong token count, bad header)
    "size",             # counts disagree (header n or m vs. the lines/entries, array lengths)
    "out_of_range",     # a vertex id outside 0..n-1 (or 1..n in a file)
    "self_loop",        # an edge from a vertex to itself
    "duplicate",        # an edge listed more than once (merge_duplicates=True sums them)
    "asymmetric",       # u lists v but v does not list u
    "weight_mismatch",  # u lists v and v lists u with different weights
    "bad_weight",       # a weight that is not positive (edges), negative (vertices), not finite, or too large
    "unsupported",      # valid input that matchpart does not handle (multi-constraint weights, ...)
    "invalid",          # anything else (wrong types, shapes)
)


class GraphError(MatchpartError, ValueError):
    """A graph is malformed: asymmetric, out-of-range index, bad weight, ...

    ``kind`` says what is wrong (one of GRAPH_ERROR_KINDS); ``vertex`` and ``neighbor``
    (0-based) name the offending entry when known, so that readers can restate the error
    with the file line of that vertex.
    """

    def __init__(self, message, vertex=None, neighbor=None, *, kind="invalid"):
        super().__init__(message)
        self.kind = kind
        self.vertex = vertex
        self.neighbor = neighbor
        self.location = None


class GraphFormatError(GraphError):
    """A graph or partition file cannot be used; the message names file and line.

    ``location`` is ``(path, line)`` (line 1-based, or None when the whole file is meant);
    ``path`` and ``line`` give the same separately.
    """

    def __init__(self, message, path=None, line=None, *, kind="parse", vertex=None, neighbor=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message, vertex, neighbor, kind=kind)
        self.path = path
        self.line = line
        self.location = (path, line)
        self.detail = message  # the message without the location


class DeviceError(MatchpartError, RuntimeError):
    """The requested device (e.g. a GPU) is not usable."""


class UnsupportedOptionError(MatchpartError, ValueError):
    """An option of another partitioner's interface (METIS, pymetis, nxmetis) that matchpart
    has no equivalent for; raised instead of ignoring it. ``kind`` is "unsupported",
    ``option`` the option's name."""

    def __init__(self, message, option=None):
        super().__init__(message)
        self.kind = "unsupported"
        self.option = option


class OutOfMemoryError(MatchpartError, MemoryError):
    """The run needed more memory than the process may have (its --mem-limit, or the
    machine's). ``kind`` is "memory"; ``limit`` the limit in bytes when one was set."""

    def __init__(self, message, limit=None):
        super().__init__(message)
        self.kind = "memory"
        self.limit = limit
