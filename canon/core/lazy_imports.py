"""Keep `import lancedb` from running code a local index never uses.

lancedb imports `lance_namespace`, which imports the generated model classes
of `lance_namespace_urllib3_client`, the REST client of the Lance namespace
service. That package's `__init__` also imports its nine API modules, whose
pydantic `validate_call` decorators build hundreds of validators at import:
most of what `import lancedb` costs, paid by every fresh process (each Dagster
step, each `canon` command). `make bench` measures process start-up.

`defer_rest_client()` registers the package without running its `__init__`:
its submodules (`.models`, which lance_namespace needs) import as usual from
the package directory, and the first access to any other attribute of the
package (an API class, `ApiClient`, ...) runs the real `__init__` then, so
nothing that uses the REST client can tell the difference. If the package is
missing or already imported, nothing is done.
"""

from __future__ import annotations

import importlib.util
import sys

REST_CLIENT = "lance_namespace_urllib3_client"


def defer_rest_client() -> bool:
    """True when the REST client package was registered for deferred import."""
    if REST_CLIENT in sys.modules or "lancedb" in sys.modules:
        return False
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return False
    module = importlib.util.module_from_spec(spec)

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        del module.__dict__["__getattr__"]   # called once: the real __init__ defines the rest
        spec.loader.exec_module(module)      # the real __init__, into the same module object
        return getattr(module, name)

    module.__getattr__ = __getattr__
    sys.modules[REST_CLIENT] = module
    return True
