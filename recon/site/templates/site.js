/* recon site: a little vanilla JS, no framework, no request of its own.
   - the leaderboard filter (evidence condition, agent);
   - run metadata (data/runs.js) and the manifest (data/manifest.js), which the export writes
     beside the pages because they cannot be part of the site's own digest.
   Everything is built with the DOM API (textContent), never innerHTML. */
(function () {
  "use strict";

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }

  function table(headers, rows, cls) {
    var wrap = el("div", null, "scroll");
    var t = el("table", null, cls);
    var head = el("thead");
    var tr = el("tr");
    headers.forEach(function (h) { tr.appendChild(el("th", h)); });
    head.appendChild(tr);
    t.appendChild(head);
    var body = el("tbody");
    rows.forEach(function (row) {
      var r = el("tr");
      row.forEach(function (cell) {
        var td = el("td");
        if (cell && cell.digest !== undefined) {
          td.appendChild(cell.digest === null ? el("span", "withheld", "muted") : el("code", cell.digest, "digest"));
        } else {
          td.textContent = cell === null || cell === undefined ? "—" : String(cell);
        }
        r.appendChild(td);
      });
      body.appendChild(r);
    });
    t.appendChild(body);
    wrap.appendChild(t);
    return wrap;
  }

  function filters() {
    var form = document.getElementById("filters");
    if (!form) { return; }
    var selects = form.querySelectorAll("select[data-filter]");
    var rows = document.querySelectorAll("table.leaderboard tbody tr[data-agent]");
    function apply() {
      var shown = 0;
      rows.forEach(function (row) {
        var ok = true;
        selects.forEach(function (s) {
          if (s.value && row.getAttribute("data-" + s.getAttribute("data-filter")) !== s.value) { ok = false; }
        });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      document.getElementById("filter-count").textContent = shown + " of " + rows.length + " entries shown";
    }
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    apply();
  }

  function runs() {
    var data = window.RECON_RUNS;
    if (!data) { return; }
    document.querySelectorAll("[data-run][data-field]").forEach(function (cell) {
      var run = data.attempts[cell.getAttribute("data-run")];
      if (!run) { cell.textContent = "not recorded"; return; }
      var field = cell.getAttribute("data-field");
      if (field === "wall_s") {
        cell.textContent = typeof run.wall_ms === "number" ? (run.wall_ms / 1000).toFixed(2) + " s" : "—";
      } else {
        cell.textContent = "";
        cell.appendChild(run[field] ? el("code", run[field], "digest") : el("span", "—"));
      }
    });
  }

  function manifest() {
    var data = window.RECON_MANIFEST;
    var host = document.getElementById("manifest");
    if (!data || !host) { return; }
    host.textContent = "";
    host.appendChild(el("h2", "Release"));
    host.appendChild(table(["field", "value"], [
      ["release", data.release],
      ["manifest version", data.version],
      ["manifest schema", data.schema_version],
      ["release JSON", {digest: data.release_json}],
      ["site", {digest: data.site}]
    ], "facts"));
    host.appendChild(el("h2", "Tool versions"));
    host.appendChild(table(["tool", "version"], data.toolchain, "facts"));
    host.appendChild(el("h2", "Inputs"));
    host.appendChild(table(["input", "digest"], data.inputs.map(function (r) {
      return [r[0], {digest: r[1]}];
    })));
    host.appendChild(el("h2", "Cells"));
    host.appendChild(el("p", data.cells.length + " cells. Withheld: the outputs of " +
      data.withheld.join(", ") + " cells (they read sealed material).", "muted"));
    data.kinds.forEach(function (kind) {
      var mine = data.cells.filter(function (c) { return c.kind === kind; });
      var box = el("details");
      box.appendChild(el("summary", kind + " (" + mine.length + ")"));
      var rows = [];
      mine.forEach(function (c) {
        var outs = Object.keys(c.outputs).sort();
        if (!outs.length) { rows.push([c.name, {digest: c.key}, "", ""]); }
        outs.forEach(function (o, i) {
          rows.push([i ? "" : c.name, i ? "" : {digest: c.key}, o, {digest: c.outputs[o]}]);
        });
      });
      box.appendChild(table(["cell", "key", "output", "digest"], rows, "cells"));
      host.appendChild(box);
    });
  }

  filters();
  runs();
  manifest();
}());
