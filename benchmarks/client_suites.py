"""The clients' own test suites against ``fakeapi serve``: passed / failed / out of scope, per suite.

::

    python benchmarks/client_suites.py --suite kubernetes=PATH --suite kr8s=PATH --suite lightkube=PATH

Each ``PATH`` is a checkout (or a bare git directory, read at ``HEAD``) of the
client's repository: kubernetes-client/python, kr8s-org/kr8s, gtsystem/lightkube.
For each suite the script

1. makes a virtual environment (``--system-site-packages``: fakeapi's own
   dependencies come from this interpreter) and installs the client at its
   pinned version (:data:`SUITES`) with the test dependencies its suite needs,
   at the versions the suite's own CI installs, with pip, so nothing is added to
   the interpreter running it;
2. starts ``python -m fakeapi serve --tls`` (a cluster: the garbage collector,
   namespace controller and kubelet run in it; a CA, a client certificate and
   a token in its kubeconfig) on a free port;
3. runs the suite's tests with pytest (without fakeapi's own pytest plugin,
   should it be installed), unmodified, pointed at the server by
   ``KUBECONFIG``; only the suite's cluster fixture is replaced where it would
   start a kind cluster (kr8s), by one that hands out the served kubeconfig;
4. reads the JUnit report and prints, per suite, the tests that passed, those
   that failed, and those out of scope: the tests listed in
   :data:`OUT_OF_SCOPE` with the reason, which is always that they need a real
   container runtime or network (exec into a process, port-forward to a
   socket, a real image's behaviour, a metrics server). A listed test that
   passes counts as passed.

Exit status 0 when every test not out of scope passed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Suite:
    """How to run one client's suite."""

    #: pip requirements: the client pinned, and its suite's test dependencies.
    requirements: tuple[str, ...]
    #: Paths inside the repository to extract (tests and the files they read).
    paths: tuple[str, ...]
    #: pytest runs, each its arguments (test paths relative to the extracted tree, options): packages
    #: of the same name (two ``e2e_test`` directories) need runs of their own.
    pytest_runs: tuple[tuple[str, ...], ...]
    #: A conftest.py written at the tree's root (the cluster fixture shim), or "".
    conftest: str = ""
    #: Files of the tree to remove before running (their fixtures start kind clusters).
    remove: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    #: The git revision of a bare repository whose tests match the pinned client (its release tag).
    ref: str = "HEAD"


_K8S_CONFTEST = '''
import os
import kubernetes
import kubernetes.aio

# the e2e tests import kubernetes.e2e_test, which the wheel does not ship: extend the package path
here = os.path.dirname(os.path.abspath(__file__))
kubernetes.__path__.append(os.path.join(here, "kubernetes"))
kubernetes.aio.__path__.append(os.path.join(here, "kubernetes", "aio"))
'''

_KR8S_CONFTEST = '''
import os
from pathlib import Path

import pytest


class ServedCluster:
    """What kr8s's fixtures use of pytest-kind's KindCluster: the kubeconfig and kubectl."""

    def __init__(self, kubeconfig):
        import shutil

        self.kubeconfig_path = Path(kubeconfig)
        self.kubectl_path = shutil.which("kubectl")

    def kubectl(self, *args):
        import subprocess

        return subprocess.check_output(["kubectl", "--kubeconfig", str(self.kubeconfig_path), *args], text=True)


@pytest.fixture(scope="session", autouse=True)
def k8s_cluster():
    yield ServedCluster(os.environ["KUBECONFIG"])


@pytest.fixture
def ensure_gc():
    import gc

    gc.collect()
    yield
    gc.collect()


def pytest_addoption(parser):
    parser.addoption("--keep-cluster", action="store_true")
'''

SUITES: dict[str, Suite] = {
    "kubernetes": Suite(
        requirements=("kubernetes==37.0.2", "pytest"),
        paths=("kubernetes/e2e_test", "kubernetes/aio/e2e_test"),
        pytest_runs=(("kubernetes/e2e_test",), ("kubernetes/aio/e2e_test",)),
        conftest=_K8S_CONFTEST,
    ),
    "kr8s": Suite(
        # kr8s's CI resolves its dev dependencies unpinned at the tag's date (no lock file): the trio
        # that this anyio supports (its "trio" extra; trio 0.22 lacks to_thread_run_sync's
        # abandon_on_cancel), and the kubernetes client of the Kubernetes version the tag's CI tests
        # (1.35), before 37.x made kubernetes.client.models' submodules lazy (the suite reads
        # kubernetes.client.models.v1_pod without importing it).
        requirements=("kr8s==0.20.15", "pytest", "pytest-asyncio==1.5.0", "pytest-timeout==2.4.0", "trio",
                      "anyio[trio]", "lightkube", "kubernetes==35.0.0", "pykube-ng==23.6.0",
                      "kubernetes-asyncio==36.1.0"),
        paths=("kr8s/tests", "kr8s/conftest.py", "examples"),
        pytest_runs=(("kr8s/tests", "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function",
                      "--timeout=300"),),
        conftest=_KR8S_CONFTEST,
        ref="v0.20.15",
    ),
    "lightkube": Suite(
        # the checkout's HEAD is lightkube 0.21.0 (its pyproject); its e2e CI installs it with the
        # lightkube-models of the tested Kubernetes (1.34). lightkube 1.x makes the models slotted
        # dataclasses, where the suite's `crd.spec.names.shortnames = ...` is an AttributeError.
        requirements=("lightkube==0.21.0", "lightkube-models==1.34.0.8", "pytest", "pytest-asyncio==1.5.0",
                      "pytest-timeout==2.4.0"),
        paths=("e2e-tests",),
        pytest_runs=(("e2e-tests", "-o", "asyncio_mode=auto", "--timeout=120"),),
    ),
}

#: Tests that need a container runtime or a network, by suite: (pattern of the test id, reason).
OUT_OF_SCOPE: dict[str, list[tuple[str, str]]] = {
    "kubernetes": [
        (r"test_client\.TestClient::test_(pod_apis|exit_code|pod_exec_close_channel)$",
         "exec into a container (a process the simulated kubelet does not run)"),
        (r"test_client\.TestClient::test_portforward_(http|raw)$", "port-forward to a socket in a container"),
    ],
    "kr8s": [
        (r"test_objects::test_\w*exec\w*", "exec into a container"),
        (r"test_objects::test_adoption$", "exec into a container (its nginx_service fixture runs dd in the pod)"),
        (r"::test_\w*port_?forward\w*", "port-forward to a socket in a container"),
        (r"::test_\w*(logs|log_)\w*", "logs written by a real image (the simulated containers write none)"),
    ],
    "lightkube": [
        (r"::test_\w*exec\w*", "exec into a container"),
        (r"::test_pod_apis$", "a metrics-server pod in kube-system and the log lines of a real image's shell loop"),
    ],
}


def _extract(repo: Path, paths: tuple[str, ...], dest: Path, ref: str = "HEAD") -> None:
    """Copy ``paths`` of a checkout, or of a bare git directory at ``ref``, into ``dest``."""
    if (repo / ".git").exists() or not (repo / "HEAD").exists():
        for p in paths:
            src = repo / p
            if src.is_dir():
                shutil.copytree(src, dest / p, dirs_exist_ok=True)
            elif src.exists():
                (dest / p).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / p)
        return
    present = [p for p in paths if subprocess.run(["git", f"--git-dir={repo}", "cat-file", "-e", f"{ref}:{p}"],
                                                  capture_output=True).returncode == 0]
    archive = subprocess.run(["git", f"--git-dir={repo}", "archive", ref, *present], check=True,
                             capture_output=True).stdout
    tar = dest / ".suite.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(dest, filter="data")
    tar.unlink()


def _venv(where: Path, requirements: tuple[str, ...]) -> Path:
    """A virtual environment over this interpreter's packages, with ``requirements`` installed."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    return python


class Served:
    """``fakeapi serve --tls`` in a subprocess, on a free port."""

    def __init__(self, kubeconfig: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "fakeapi.cli", "serve", "--tls", "--port", "0",
                                      "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if "serving" not in first:
            raise RuntimeError(f"fakeapi serve did not start: {first!r}")
        self.url = first.split()[-1]

    def stop(self) -> None:
        """Interrupt the server and wait for it."""
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)


@dataclass
class Result:
    """One suite's outcome."""

    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    out_of_scope: list[tuple[str, str]] = field(default_factory=list)


def _classify(name: str, reports: list[Path], out: Result) -> Result:
    cases = [c for r in reports if r.exists() for c in ET.parse(r).getroot().iter("testcase")]
    for case in cases:
        test_id = f"{case.get('classname', '')}::{case.get('name')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        reason = next((why for pattern, why in OUT_OF_SCOPE.get(name, []) if re.search(pattern, test_id)), None)
        if skipped:
            msg = (case.find("skipped").get("message") or "") if case.find("skipped") is not None else ""
            out.out_of_scope.append((test_id, reason or f"skipped by the suite: {msg}"))
        elif not bad:
            out.passed.append(test_id)
        elif reason is not None:
            out.out_of_scope.append((test_id, reason))
        else:
            out.failed.append(test_id)
    return out


def run_suite(name: str, repo: Path, work: Path) -> Result:
    """Run one suite against a fresh ``fakeapi serve`` and classify its tests."""
    suite = SUITES[name]
    tree = work / name
    tree.mkdir(parents=True)
    _extract(repo, suite.paths, tree, suite.ref)
    for rel in suite.remove:
        (tree / rel).unlink(missing_ok=True)
    if suite.conftest:
        (tree / "conftest.py").write_text(suite.conftest)
    python = _venv(work / f"{name}-venv", suite.requirements)
    kubeconfig = work / f"{name}-kubeconfig"
    served = Served(kubeconfig)
    reports = []
    try:
        env = {**os.environ, **suite.env, "KUBECONFIG": str(kubeconfig)}
        for i, run in enumerate(suite.pytest_runs):
            report = work / f"{name}-{i}.xml"
            reports.append(report)
            # (-p no:fakeapi: fakeapi's own pytest plugin, when installed, has no part in a client's suite)
            subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:fakeapi",
                            "--rootdir", str(tree),
                            f"--junitxml={report}", *run], cwd=tree, env=env)
    finally:
        served.stop()
    return _classify(name, reports, Result())


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--suite", action="append", default=[], metavar="NAME=PATH",
                   help=f"a suite ({', '.join(SUITES)}) and its repository checkout")
    p.add_argument("--keep", action="store_true", help="keep the working directory")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="fakeapi-suites-"))
    ok = True
    try:
        for spec in args.suite:
            name, _, path = spec.partition("=")
            if name not in SUITES or not path:
                p.error(f"--suite {spec!r}: expected NAME=PATH with NAME one of {', '.join(SUITES)}")
            res = run_suite(name, Path(path), work)
            print(f"{name}: {len(res.passed)} passed, {len(res.failed)} failed, {len(res.out_of_scope)} out of scope")
            for t in res.failed:
                print(f"  FAILED {t}")
            for t, why in res.out_of_scope:
                print(f"  out of scope {t}: {why}")
            ok = ok and not res.failed
    finally:
        if args.keep:
            print(f"(working directory: {work})")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
