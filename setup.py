"""Build hook: with ``FAKEAPI_MYPYC=1``, compile fakeapi's hot pure-function modules with mypyc.

Everything else about the package is declared in ``pyproject.toml``. By default nothing is
compiled: the package is pure Python and installs anywhere Python and pip run. With
``FAKEAPI_MYPYC=1 pip install .`` (or ``-e .``), the modules in :data:`COMPILED` are compiled
to C extensions (this needs a C compiler and the Python headers; pip fetches mypy for the
build), as mypy and black ship their own wheels. The semantics are the same, and the test
``tests/test_compiled_build.py`` checks that on a compiled copy: only the speed changes.

An editable compiled install puts the extensions next to the sources, where they shadow
them: after editing one of these modules, build again (``fakeapi`` warns at import when an
extension is older than its source).
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

#: The modules compiled with FAKEAPI_MYPYC=1: pure functions and plain records over JSON
#: values (the Go codec, the decode pipeline, patches, equality, metadata validation,
#: selectors, the store, field sets and their typed walks). Classes a user may subclass or spy on (the server, the client,
#: the host) stay Python; so do exception classes with class attributes (see patcherrors.py).
COMPILED = [
    "fakeapi/registry/apps/defaults.py",
    "fakeapi/registry/batch/defaults.py",
    "fakeapi/registry/core/defaults.py",
    "fakeapi/registry/networking/defaults.py",
    "fakeapi/registry/rbac/defaults.py",
    "fakeapi/machinery/fieldpath.py",
    "fakeapi/controllers/gccollect.py",
    "fakeapi/codec/godecode.py",
    "fakeapi/codec/gomodel.py",
    "fakeapi/machinery/jsonutil.py",
    "fakeapi/machinery/metavalidation.py",
    "fakeapi/machinery/gorender.py",
    "fakeapi/machinery/patches.py",
    "fakeapi/schema/compiled.py",
    "fakeapi/machinery/selectors.py",
    "fakeapi/codec/semantic.py",
    "fakeapi/server/store.py",
    "fakeapi/schema/structural.py",
    "fakeapi/server/trace.py",
    "fakeapi/machinery/typedfields.py",
    "fakeapi/machinery/typedapply.py",
]

WANTED = os.environ.get("FAKEAPI_MYPYC") == "1"

#: What a compiled build installs to build with: mypy, and the type stubs the type check of the compiled
#: modules reads (without them, mypy's view of an import differs from the project's own check, and
#: ``warn_unused_ignores`` fails the build in an isolated build environment).
BUILD_REQUIRES = ["mypy>=1.11", "types-PyYAML"]


def ext_modules() -> list:
    """The mypyc extensions to build: none unless FAKEAPI_MYPYC=1."""
    if not WANTED:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        # pip's first pass only asks for the build requirements (mypy, below); a build
        # without build isolation needs mypy installed already
        print("FAKEAPI_MYPYC=1: mypy is not installed yet; building without compiled modules", file=sys.stderr)
        return []
    # FAKEAPI_MYPYC_OPT: the C optimisation level (0 builds fastest: the test of the compiled build uses it);
    # FAKEAPI_MYPYC_DEBUG: the C debug information (0: none, which halves the C compiler's time at -O0;
    # the test's build uses it too, as nobody steps through its extensions in a debugger)
    return mypycify(COMPILED, opt_level=os.environ.get("FAKEAPI_MYPYC_OPT", "3"),
                    debug_level=os.environ.get("FAKEAPI_MYPYC_DEBUG", "1"), separate=True)


setup(
    ext_modules=ext_modules(),
    # the build requirements of a compiled build (PEP 517: pip installs them before building)
    setup_requires=BUILD_REQUIRES if WANTED else [],
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
)
