"""A picture of a case: one self-contained HTML page with its timeline (docs/RUNNING.md "HTML reports").

``fakeapi run --report DIR`` and ``pytest --fakeapi-report DIR`` write one
page per failing case (``--report-all`` / ``--fakeapi-report-all``: per case).
The page has one lane per actor (the user and the harness, each controller,
the kubelet, simulators, the garbage collector), one row per trace entry in
order with the virtual time on the left axis; every API call shows its
verb, object, status code and resourceVersion; each reconcile is a span in
its controller's lane from its start to its last call; error answers,
faults a rule injected and crashes are marked; each mismatch is shown beside the
step that produced it. Clicking a call shows the object before and after it
(with the changed lines marked). Everything is inline (CSS, JS, data): the
page needs no network and no other file.

The objects come from :func:`~fakeapi.harness.runner.run_case` with
``record_objects=True``, which keeps a copy of each object after every write.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from fakeapi.harness.report import render_mismatch, strip_noise
from fakeapi.harness.runner import CaseResult

#: Lane of the harness's notes (steps, operations) and of the user's calls.
USER_LANE = "user"


def page_name(result: CaseResult) -> str:
    """A file name for the case's page: readable, unique per file, case and variant."""
    case = result.case
    ident = f"{case.file}::{case.name}" + (f"[{result.variant.name}]" if result.variant else "")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{Path(case.file).stem}-{case.name}").strip("-")[:80]
    if result.variant is not None:
        slug += f"--{result.variant.mode}-{result.variant.index}"
    return f"{slug}-{hashlib.sha256(ident.encode()).hexdigest()[:8]}.html"


def write_case_report(folder: Path, result: CaseResult) -> Path:
    """Write the page of one run into ``folder``; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / page_name(result)
    path.write_text(render_page(result), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ the model


def _lane_of(actor: str, controllers: list[str]) -> str:
    base = actor.split("/", 1)[0]  # "greeter/informer" is the controller's own lane
    if base in ("user", "harness", "phase"):
        return USER_LANE
    return base


def _lanes(result: CaseResult, entries: list[Any]) -> list[str]:
    controllers = list(result.host.controllers) if result.host is not None else []
    seen: list[str] = []
    for e in entries:
        lane = _lane_of(str(getattr(e, "actor", None) or getattr(e, "controller", "")), controllers)
        if lane not in seen:
            seen.append(lane)

    def order(lane: str) -> tuple[int, int]:
        if lane == USER_LANE:
            return (0, 0)
        if lane in controllers:
            return (1, controllers.index(lane))
        if lane == "kubelet":
            return (2, 0)
        if lane == "garbage-collector":
            return (4, 0)
        if lane == "system":
            return (5, 0)
        return (3, seen.index(lane))

    out = sorted(seen, key=order)
    return out if USER_LANE in out else [USER_LANE, *out]


def _since(t: datetime, start: datetime) -> str:
    from fakeapi.server.clock import format_duration

    return "+" + format_duration(t - start)


def build_model(result: CaseResult) -> dict[str, Any]:
    """The page's data: lanes, rows (calls, reconciles, notes), reconcile spans, mismatches, objects."""
    from fakeapi.server.trace import ApiCall, Note, ReconcileRecord

    api = result.api
    entries: list[Any] = list(api.trace.entries) if api is not None else []
    lanes = _lanes(result, entries) if api is not None else [USER_LANE]
    controllers = list(result.host.controllers) if result.host is not None else []
    start = entries[0].time if entries and hasattr(entries[0], "time") else None
    rows: list[dict[str, Any]] = []
    row_of_seq: dict[int, int] = {}
    injected: dict[int, str] = getattr(result, "injected", None) or {}
    step_rows: list[tuple[str, int]] = []  # (step title, row where it begins)
    for e in entries:
        row = len(rows)
        if isinstance(e, ApiCall):
            target = f"{e.namespace}/{e.name}" if e.namespace else e.name
            error = e.code >= 400 or e.reason == "Crash"
            rows.append({
                "type": "call", "seq": e.seq, "lane": _lane_of(e.actor, controllers), "actor": e.actor,
                "time": e.time, "verb": e.verb, "kind": e.kind + (f"/{e.subresource}" if e.subresource else ""),
                "object": target, "code": e.code, "reason": e.reason, "rv": e.resource_version,
                "patch": e.patch_type, "wrote": e.wrote, "error": error, "reconcile": e.reconcile,
                "crash": e.reason == "Crash",
                "injected": injected.get(e.seq, ""),
            })
        elif isinstance(e, ReconcileRecord):
            key = f"{e.namespace}/{e.name}" if e.namespace else e.name
            rows.append({"type": "reconcile", "seq": e.seq, "lane": e.controller, "time": e.start,
                         "object": key, "result": e.result or "running", "calls": list(e.calls),
                         "error": e.result.startswith("error") or e.result == "crash",
                         "crash": e.result == "crash"})
        elif isinstance(e, Note):
            text = e.text
            crash = "crashed" in text
            rows.append({"type": "note", "seq": e.seq, "lane": _lane_of(e.actor, controllers), "actor": e.actor,
                         "time": e.time, "text": text, "crash": crash,
                         "fault": text.startswith(("do fault", "do clear_faults", "injected"))})
            m = re.match(r"(step \d+(?: \(.*\))?) begins$", text) if e.actor == "harness" else None
            if m:
                step_rows.append((m.group(1), row))
        else:  # pragma: no cover - the trace has three entry types
            continue
        row_of_seq[e.seq] = row
    for r in rows:
        r["t"] = _since(r.pop("time"), start) if start is not None else ""
    # reconcile spans: from the reconcile's row to the row of its last call
    spans = []
    for r in rows:
        if r["type"] == "reconcile":
            end = max([row_of_seq[c] for c in r["calls"] if c in row_of_seq] or [row_of_seq[r["seq"]]])
            spans.append({"lane": r["lane"], "from": row_of_seq[r["seq"]], "to": end, "seq": r["seq"],
                          "error": r["error"]})
    # mismatches beside the step that produced them (the row before the next step begins)
    def phase_row(phase: str) -> int:
        for i, (title, _row) in enumerate(step_rows):
            if phase in (f"after {title}", f"in {title}"):
                return (step_rows[i + 1][1] - 1) if i + 1 < len(step_rows) else len(rows) - 1
        if phase == "given":
            return (step_rows[0][1] - 1) if step_rows else len(rows) - 1
        return max(len(rows) - 1, 0)

    mismatches = [{"phase": f.phase, "row": phase_row(f.phase), "text": render_mismatch(f.mismatch)}
                  for f in result.failures]
    objects: dict[str, Any] = {}
    recorded = getattr(result, "objects", None) or {}
    last: dict[tuple[str, str, str], Any] = {}  # each object as the last write before this point left it
    for e in entries:
        if not isinstance(e, ApiCall) or not e.name:
            continue
        okey = (e.kind, e.namespace, e.name)
        if e.seq in recorded:
            before, after = recorded[e.seq]
            objects[str(e.seq)] = {"before": strip_noise(before) if before is not None else None,
                                   "after": strip_noise(after) if after is not None else None}
            last[okey] = objects[str(e.seq)]["after"]
        elif last.get(okey) is not None:  # a read, an error or a no-op write: the object as it stood
            objects[str(e.seq)] = {"before": last[okey], "after": last[okey], "unchanged": True}
    case = result.case
    return {
        "case": case.name, "location": case.location,
        "variant": result.variant.describe() if result.variant is not None else "",
        "passed": result.passed, "aborted": result.aborted, "lanes": lanes, "rows": rows, "spans": spans,
        "mismatches": mismatches, "objects": objects,
        "summary": {"reconciles": result.reconciles, "calls": result.calls,
                    "virtual": rows[-1]["t"] if rows else ""},
    }


# ------------------------------------------------------------------------------ the page


_CSS = """
body{font:13px/1.35 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
header{padding:10px 16px;border-bottom:1px solid #d0d7de;background:#f6f8fa}
h1{font-size:16px;margin:0 0 4px}
.ok{color:#1a7f37}.bad{color:#cf222e}
.meta{color:#57606a}
#failures{margin:8px 0 0;padding:0 0 0 18px}
#failures li{font-family:ui-monospace,monospace;white-space:pre-wrap}
main{display:flex;align-items:flex-start}
#timeline{flex:1;overflow:auto;padding:8px 0}
.grid{display:grid;position:relative;column-gap:6px}
.lanehead{position:sticky;top:0;background:#fff;font-weight:600;border-bottom:2px solid #d0d7de;
  padding:2px 4px;z-index:3;white-space:nowrap}
.axis{color:#57606a;font-family:ui-monospace,monospace;font-size:11px;text-align:right;padding-right:4px;
  border-right:1px solid #d0d7de;white-space:nowrap}
.cell{font-family:ui-monospace,monospace;font-size:11px;white-space:nowrap;overflow:hidden;
  text-overflow:ellipsis;padding:1px 4px;border-radius:3px;z-index:2;max-width:30em;margin:1px 0}
.cell .sub{display:block;color:#57606a;overflow:hidden;text-overflow:ellipsis}
.call{background:#ddf4ff;cursor:pointer}
.call.read{background:#f6f8fa;color:#57606a}
.call.err{background:#ffebe9;color:#82071e;font-weight:600}
.call.sel{outline:2px solid #0969da}
.reconcile{background:transparent;color:#6639ba;font-weight:600}
.note{color:#57606a;font-style:italic}
.note.step{color:#1b1f24;font-weight:600;font-style:normal;border-top:1px solid #d0d7de}
.mark{color:#cf222e;font-weight:700}
.span{background:#fbefff;border-left:3px solid #8250df;z-index:1;border-radius:3px}
.span.err{background:#fff1e5;border-left-color:#cf222e}
.mismatch{background:#ffebe9;border:1px solid #cf222e;color:#82071e;white-space:pre-wrap;z-index:4;
  font-family:ui-monospace,monospace;font-size:11px;padding:2px 6px;border-radius:4px}
aside{width:32%;min-width:22em;position:sticky;top:0;max-height:100vh;overflow:auto;border-left:1px solid #d0d7de;
  padding:8px 12px;box-sizing:border-box}
aside h2{font-size:14px;margin:4px 0}
aside pre{background:#f6f8fa;padding:6px;margin:4px 0 10px;font-size:11px;white-space:pre-wrap}
pre .add{background:#dafbe1;display:block}pre .del{background:#ffebe9;display:block}
"""

_JS = r"""
(function(){
  var data = JSON.parse(document.getElementById('case-data').textContent);
  function lines(v){ return v === null || v === undefined ? [] : JSON.stringify(v, null, 2).split('\n'); }
  function show(pre, mine, other, cls){
    pre.textContent = '';
    if (!mine.length){ pre.textContent = '(none)'; return; }
    // a line is unchanged when the other side has it too (a trailing comma does not count)
    function key(l){ return l.replace(/,$/, ''); }
    var seen = {}; other.forEach(function(l){ seen[key(l)] = (seen[key(l)]||0) + 1; });
    mine.forEach(function(l){
      var s = document.createElement('span');
      if (seen[key(l)]) { seen[key(l)]--; } else { s.className = cls; }
      s.textContent = l + '\n'; pre.appendChild(s);
    });
  }
  function select(seq){
    var el = document.querySelector('[data-seq="' + seq + '"]');
    if (!el) return;
    document.querySelectorAll('.call.sel').forEach(function(x){ x.classList.remove('sel'); });
    el.classList.add('sel');
    var o = data.objects[String(seq)];
    document.getElementById('sel-title').textContent = el.getAttribute('title');
    var b = o ? lines(o.before) : [], a = o ? lines(o.after) : [];
    document.getElementById('sel-note').textContent = (o && !o.unchanged) ? '' :
      'this call changed nothing stored (a read, an error, or a write that kept every byte)' +
      (o ? ': the object as it stood' : '');
    show(document.getElementById('before'), b, a, 'del');
    show(document.getElementById('after'), a, b, 'add');
    document.body.setAttribute('data-selected', String(seq));
  }
  document.querySelectorAll('.call').forEach(function(el){
    el.addEventListener('click', function(){ select(el.getAttribute('data-seq')); });
  });
  // a link to #call-N opens the page with that call clicked (the same click event a user's click sends)
  var m = /^#call-(\d+)$/.exec(location.hash);
  var target = m ? document.querySelector('.call[data-seq="' + m[1] + '"]') : null;
  if (target) { target.dispatchEvent(new MouseEvent('click', {bubbles: true})); }
  document.body.setAttribute('data-ready', '1');
})();
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def render_page(result: CaseResult) -> str:
    """The whole page of one case run, as HTML text."""
    m = build_model(result)
    lanes: list[str] = m["lanes"]
    col = {lane: i + 2 for i, lane in enumerate(lanes)}  # column 1 is the time axis
    n_lanes = len(lanes)
    cells: list[str] = []
    for i, lane in enumerate(lanes):
        cells.append(f'<div class="lanehead" style="grid-row:1;grid-column:{i + 2}">{_e(lane)}</div>')
    cells.append('<div class="lanehead" style="grid-row:1;grid-column:1">time</div>')
    last_t = None
    for i, r in enumerate(m["rows"]):
        gr = i + 2
        if r["t"] != last_t:
            cells.append(f'<div class="axis" style="grid-row:{gr};grid-column:1">{_e(r["t"])}</div>')
            last_t = r["t"]
        c = col.get(r["lane"], 2)
        if r["type"] == "call":
            res = f'{r["code"]}' + (f' {r["reason"]}' if r["reason"] else "")
            rv = f' rv={r["rv"]}' if r["rv"] else ""
            pt = f' ({r["patch"]})' if r["patch"] else ""
            text = f'{r["verb"]} {r["kind"]} {r["object"]}{pt} → {res}{rv}'
            title = f'#{r["seq"]} {r["actor"]}: {text}'
            cls = "call" + (" err" if r["error"] else "") + ("" if r["wrote"] or r["error"] else " read")
            mark = '<span class="mark">✖ crash </span>' if r["crash"] else ""
            if r["injected"]:
                mark = f'<span class="mark">⚠ injected {_e(r["injected"])} </span>'
                title += f' (a fault rule: {r["injected"]})'
            sub = f'{r["object"]}{pt} → {res}{rv}'.strip()
            cells.append(f'<div class="cell {cls}" id="c{r["seq"]}" data-seq="{r["seq"]}" title="{_e(title)}" '
                         f'style="grid-row:{gr};grid-column:{c}">{mark}{_e(r["verb"])} {_e(r["kind"])}'
                         f'<span class="sub">{_e(sub)}</span></div>')
        elif r["type"] == "reconcile":
            mark = '<span class="mark">✖ </span>' if r["error"] else ""
            text = f'reconcile #{r["seq"]} {r["object"]} → {r["result"]}'
            cells.append(f'<div class="cell reconcile" title="{_e(text)}" '
                         f'style="grid-row:{gr};grid-column:{c}">{mark}reconcile #{r["seq"]} {_e(r["object"])}'
                         f'<span class="sub">→ {_e(r["result"])}</span></div>')
        else:
            is_step = r["actor"] == "harness" and r["text"].endswith(" begins")
            cls = "note step" if is_step else "note"
            mark = ('<span class="mark">⚡ </span>' if r["crash"] else
                    '<span class="mark">⚠ fault </span>' if r["fault"] else "")
            text = r["text"] if r["actor"] in ("harness", r["lane"]) else f'{r["actor"]}: {r["text"]}'
            span = f"grid-column:{c}" if not is_step else f"grid-column:2 / span {n_lanes}"
            cells.append(f'<div class="cell {cls}" title="{_e(text)}" style="grid-row:{gr};{span}">'
                         f'{mark}{_e(text)}</div>')
    for s in m["spans"]:
        cls = "span err" if s["error"] else "span"
        cells.append(f'<div class="{cls}" style="grid-row:{s["from"] + 2} / {s["to"] + 3};grid-column:{col[s["lane"]]}">'
                     '</div>')
    extra = len(m["rows"]) + 2
    for mm in m["mismatches"]:
        # beside the step: in the row after the step's last entry, across the lanes
        cells.append(f'<div class="mismatch" style="grid-row:{mm["row"] + 3};grid-column:2 / span {n_lanes}">'
                     f'{_e(mm["phase"])}: {_e(mm["text"])}</div>')
        extra = max(extra, mm["row"] + 3)
    status = '<span class="ok">passed</span>' if m["passed"] else '<span class="bad">failed</span>'
    failures = "".join(f"<li>{_e(x['phase'])}: {_e(x['text'])}</li>" for x in m["mismatches"])
    aborted = f'<div class="bad">stopped early: {_e(m["aborted"])}</div>' if m["aborted"] else ""
    variant = f'<div class="meta">variant: {_e(m["variant"])}</div>' if m["variant"] else ""
    data = json.dumps({"objects": m["objects"]}, ensure_ascii=False, default=str).replace("</", "<\\/")
    summary = m["summary"]
    columns = "auto " + " ".join("minmax(15em, max-content)" for _ in lanes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(m["case"])} — fakeapi case report</title>
<style>{_CSS}</style></head>
<body>
<header>
<h1>{_e(m["case"])} {status}</h1>
<div class="meta">{_e(m["location"])} · {summary["reconciles"]} reconciles · {summary["calls"]} API calls ·
virtual time {_e(summary["virtual"])} · click a call to see the object before and after it</div>
{variant}{aborted}
<ul id="failures">{failures}</ul>
</header>
<main>
<div id="timeline"><div class="grid" style="grid-template-columns:{columns};grid-template-rows:repeat({extra}, auto)">
{"".join(cells)}
</div></div>
<aside>
<h2 id="sel-title">no call selected</h2>
<div class="meta" id="sel-note">click a call in the timeline</div>
<h2>before</h2><pre id="before"></pre>
<h2>after</h2><pre id="after"></pre>
</aside>
</main>
<script type="application/json" id="case-data">{data}</script>
<script>{_JS}</script>
</body></html>
"""


__all__ = ["build_model", "page_name", "render_page", "write_case_report"]
