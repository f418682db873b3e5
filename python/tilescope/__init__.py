"""tilescope in process: parse tile IR, mutate it as a JSON tree, check,
simulate and reward candidates, evaluate layouts (docs/python.md).

Every call releases the GIL while tilescope works, so Python threads
evaluate candidates in parallel. Errors raise tilescope.Error subclasses
carrying the diagnostics.
"""

from ._errors import Error, InputError, TreeError, UsageError
from . import _core
from ._core import Module, parse, from_json, reward, check, simulate

__all__ = ["Error", "InputError", "TreeError", "UsageError", "Module", "parse", "from_json",
           "reward", "check", "simulate", "layout"]


def layout(text, shape=None, dtype=None, target="sm_90a", scope="auto", threads=128):
    """Evaluates a layout at a logical shape: the layout visualizer's
    document (docs/layoutviz.md, "The evaluation document") as a dict, plus
    "owners_array", a numpy array of shape shape + (replicas, len(axes)) with
    every owner of every element. A layout or shape that does not evaluate
    raises InputError; legality findings are in "diagnostics"."""
    import numpy
    if shape is None:
        shape_text = ""
    elif isinstance(shape, str):
        shape_text = shape
    else:
        shape_text = ",".join(str(int(d)) for d in shape)
    doc = _core.layout(text, shape_text, dtype or "", target, scope, threads)
    owners = numpy.array(doc["owners"], dtype=numpy.int64)
    doc["owners_array"] = owners.reshape(tuple(doc["shape"]) +
                                         (doc["replicas"], len(doc["axes"])))
    return doc
