"""The HTML picture of a case (issue 23, item 6): its content, and the page in a real headless browser.

The browser tests run Debian's chromium when it is installed (``.ci/run``
installs it) and are skipped, saying why, when it is not.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from fakeapi.harness import Bundle, load_text, register_bundle, run_case
from fakeapi.harness.htmlreport import build_model, page_name, render_page, write_case_report
from fakeapi.host import Context, Host, Request

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run installs it)")


def _copy(ctx: Context, req: Request) -> None:
    cm = ctx.client.get("ConfigMap", req.name, req.namespace)
    if req.name.endswith("-copy"):
        return
    data = dict(cm.get("data") or {})
    try:
        copy = ctx.client.get("ConfigMap", req.name + "-copy", req.namespace)
    except Exception:
        ctx.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": req.name + "-copy", "namespace": req.namespace}, "data": data})
        return
    if copy.get("data") != data:
        copy["data"] = data
        ctx.client.update(copy)


def _install(host: Host, settings: dict[str, Any]) -> None:
    host.controller("copier").for_("ConfigMap").complete(_copy)


register_bundle(Bundle("report-test-copier", _install, controllers=("copier",)))

CASE = """\
name: a copy follows its source
bundles: [report-test-copier]
given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: src, namespace: default}, data: {k: v1}}
steps:
  - name: change the source
    do:
      - fault: {on: {verb: update, kind: ConfigMap, actor: copier}, error: Conflict}
      - patch: {kind: ConfigMap, namespace: default, name: src, patch: {data: {k: v2}}}
    expect:
      - object: {kind: ConfigMap, metadata: {name: src-copy, namespace: default}, data: {k: v3}}
  - name: crash the copier
    do:
      - crash: copier
"""


@pytest.fixture(scope="module")
def result() -> Any:
    return run_case(load_text(CASE, "cases/copy.yaml")[0], record_objects=True)


def test_the_model_has_lanes_calls_spans_mismatches_and_objects(result: Any) -> None:
    assert not result.passed
    m = build_model(result)
    assert m["lanes"][:2] == ["user", "copier"] and "kubelet" in m["lanes"] and "system" in m["lanes"]
    calls = [r for r in m["rows"] if r["type"] == "call"]
    update = [r for r in calls if r["verb"] == "update" and r["lane"] == "copier"]
    assert update[0]["code"] == 409 and update[0]["error"] and update[1]["code"] == 200 and update[1]["rv"]
    assert all(r["t"].startswith("+") for r in m["rows"])
    assert any(s["lane"] == "copier" and s["to"] > s["from"] for s in m["spans"])
    (mm,) = m["mismatches"]
    assert mm["phase"] == "after step 1 (change the source)"
    assert 'data.k  expected "v3"  got "v2"' in mm["text"]
    step2 = next(i for i, r in enumerate(m["rows"]) if r["type"] == "note" and r["text"] == "step 2 (crash the copier) begins")
    assert mm["row"] == step2 - 1  # beside the step that produced it
    seq = str(update[1]["seq"])
    assert m["objects"][seq]["before"]["data"] == {"k": "v1"} and m["objects"][seq]["after"]["data"] == {"k": "v2"}
    assert "managedFields" not in str(m["objects"][seq]["after"])
    assert any(r["type"] == "note" and r["crash"] for r in m["rows"])
    assert any(r["type"] == "note" and r["fault"] for r in m["rows"])


def test_calls_a_fault_rule_hit_are_marked_injected(result: Any) -> None:
    m = build_model(result)
    update = [r for r in m["rows"] if r["type"] == "call" and r["verb"] == "update" and r["lane"] == "copier"]
    assert update[0]["injected"] == "error Conflict" and update[1]["injected"] == ""
    assert result.injected == {update[0]["seq"]: "error Conflict"}
    refused = m["objects"][str(update[0]["seq"])]  # nothing changed: the object as it stood
    assert refused["unchanged"] and refused["before"] == refused["after"] and refused["after"]["data"] == {"k": "v1"}
    assert "⚠ injected error Conflict" in render_page(result)


def test_the_page_is_self_contained(result: Any, tmp_path: Path) -> None:
    page = render_page(result)
    assert "<script src" not in page and "<link" not in page and "url(" not in page
    assert not re.search(r"https?://(?!json-schema)", page)
    assert "update ConfigMap default/src-copy → 409 Conflict" in page
    path = write_case_report(tmp_path / "r", result)
    assert path.name == page_name(result) and path.name.startswith("copy-a-copy-follows-its-source-")
    assert path.read_text(encoding="utf-8") == page


def test_a_page_cannot_close_its_data_script(tmp_path: Path) -> None:
    case = load_text("name: x\ngiven:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default},"
                     " data: {k: '</script><b>x'}}\nexpect:\n  - object: {kind: ConfigMap, metadata: {name: c},"
                     " data: {k: y}}\n", "x.yaml")[0]
    page = render_page(run_case(case, record_objects=True))
    assert "</script><b>" not in page
    assert page.count("</script>") == 2  # the data block and the code block


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@needs_chromium
def test_in_a_browser_the_script_runs_and_a_click_shows_the_object_before_and_after(result: Any,
                                                                                   tmp_path: Path) -> None:
    path = write_case_report(tmp_path / "r", result)
    m = build_model(result)
    create = next(r for r in m["rows"] if r["type"] == "call" and r["verb"] == "create" and r["lane"] == "copier")
    update = next(r for r in m["rows"] if r["type"] == "call" and r["verb"] == "update" and r["code"] == 200)
    # opened at #call-N, the page sends that call's element a click event (its click handler fills the panel)
    r = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#call-{update['seq']}")
    dom = r.stdout
    assert 'data-ready="1"' in dom, r.stderr[-2000:]
    assert f'data-selected="{update["seq"]}"' in dom
    before = re.search(r'<pre id="before">(.*?)</pre>', dom, re.S)
    after = re.search(r'<pre id="after">(.*?)</pre>', dom, re.S)
    assert before and after
    assert '<span class="del">    "k": "v1"' in before.group(1)
    assert '<span class="add">    "k": "v2"' in after.group(1)
    assert f'class="cell call sel" id="c{update["seq"]}"' in dom
    r = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#call-{create['seq']}")
    assert re.search(r'<pre id="before">\(none\)</pre>', r.stdout)


def _png_pixels(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


@needs_chromium
def test_in_a_browser_the_screenshot_shows_a_timeline(result: Any, tmp_path: Path) -> None:
    path = write_case_report(tmp_path / "r", result)
    shot = tmp_path / "shot.png"
    r = _chromium(tmp_path, "--window-size=1400,900", f"--screenshot={shot}", path.as_uri())
    assert shot.is_file(), r.stderr[-2000:]
    width, height, pixels = _png_pixels(shot.read_bytes())
    assert (width, height) == (1400, 900)
    assert len(set(pixels)) > 50  # text, lanes and colours: far from a blank page
