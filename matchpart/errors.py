"""Exception types: every error a user can cause is a MatchpartError with a one-line message."""


class MatchpartError(Exception):
    """Base class for errors caused by input or configuration (shown as one line by the CLI)."""


class GraphError(MatchpartError, ValueError):
    """A graph is malformed: asymmetric, out-of-range index, bad weight, ...

    ``vertex`` and ``neighbor`` (0-based) locate the offending entry when known,
    so that readers can translate them into a file line.
    """

    def __init__(self, message, vertex=None, neighbor=None):
        super().__init__(message)
        self.vertex = vertex
        self.neighbor = neighbor


class GraphFormatError(GraphError):
    """A graph or partition file cannot be parsed; the message names file and line."""

    def __init__(self, message, path=None, line=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class DeviceError(MatchpartError, RuntimeError):
    """The requested device (e.g. a GPU) is not usable."""
