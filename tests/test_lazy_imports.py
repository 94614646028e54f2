"""canon.core.lazy_imports: importing canon before lancedb keeps LanceDB's REST
namespace client from loading its API modules, and LanceDB still works, including
the deferred package for anyone who does use it. Run in fresh interpreters, since
the point is what one process imports."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys, tempfile
{first}
import lancedb, pyarrow as pa
print("api_loaded_after_import", "lance_namespace_urllib3_client.api" in sys.modules)
db = lancedb.connect(tempfile.mkdtemp())
vec = pa.FixedSizeListArray.from_arrays(pa.array([0.1, 0.2, 0.3, 0.4], pa.float32()), 2)
tbl = db.create_table("t", data=pa.table({{"a": [1, 2], "vector": vec}}))
print("nearest", tbl.search([0.3, 0.4]).limit(1).to_list()[0]["a"])
import lance_namespace_urllib3_client as client
print("api_class", client.TableApi.__name__)
"""


def _run(first: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], capture_output=True, text=True,
                         check=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def test_canon_defers_the_rest_client_and_lancedb_still_works():
    got = _run("import canon")
    assert got["api_loaded_after_import"] == "False"
    assert got["nearest"] == "2"
    assert got["api_class"] == "TableApi"        # the deferred package loads on first use


def test_without_canon_first_lancedb_loads_the_rest_client():
    assert _run("")["api_loaded_after_import"] == "True"   # what the deferral saves
