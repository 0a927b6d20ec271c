/* recon blind preference page: vanilla JS, no request of its own, works from disk.
   Judgements live in localStorage (one key per session) and are exported as JSONL, one
   row per judgement: {schema_version, session, pair, choice, rater, time}. The rater's
   name never leaves the page: only a hash of it (cyrb53, hex) is stored and exported. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("pairs").getAttribute("data-pairs"));
  var pairs = data.pairs;
  var storeKey = "recon-calibrate-" + data.session;
  var KEYS = { ArrowLeft: "left", ArrowRight: "right", ArrowDown: "tie", b: "both-bad" };

  function load() {
    try {
      var saved = JSON.parse(window.localStorage.getItem(storeKey) || "null");
      if (saved && Array.isArray(saved.judgements)) { return saved; }
    } catch (e) { /* a damaged entry starts afresh */ }
    return { rater: null, judgements: [] };
  }
  var state = load();

  function save() { window.localStorage.setItem(storeKey, JSON.stringify(state)); }

  function cyrb53(text) {
    var h1 = 0xdeadbeef, h2 = 0x41c6ce57;
    for (var i = 0; i < text.length; i++) {
      var ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    var hi = (h2 >>> 0).toString(16), lo = (h1 >>> 0).toString(16);
    return "r" + ("00000000" + hi).slice(-8) + ("00000000" + lo).slice(-8);
  }

  function byId(id) { return document.getElementById(id); }

  function show() {
    var done = state.judgements.length;
    byId("progress").textContent = String(done);
    byId("bar").value = done;
    byId("who").hidden = state.rater !== null;
    byId("judge").hidden = state.rater === null || done >= pairs.length;
    byId("done").hidden = done < pairs.length;
    if (state.rater === null || done >= pairs.length) { return; }
    var pair = pairs[done];
    byId("where").textContent = "pair " + (done + 1) + " · " + pair.where;
    byId("left").src = pair.left;
    byId("right").src = pair.right;
    var box = byId("evidence");
    while (box.firstChild) { box.removeChild(box.firstChild); }
    pair.evidence.forEach(function (src) {
      var img = document.createElement("img");
      img.src = src;
      img.alt = "evidence";
      box.appendChild(img);
    });
  }

  function choose(choice) {
    if (state.rater === null || state.judgements.length >= pairs.length) { return; }
    var pair = pairs[state.judgements.length];
    state.judgements.push({ pair: pair.id, choice: choice, time: new Date().toISOString() });
    save();
    show();
  }

  function undo() {
    if (state.judgements.length === 0) { return; }
    state.judgements.pop();
    save();
    show();
  }

  function exported() {
    return state.judgements.map(function (j) {
      return JSON.stringify({ schema_version: 1, session: data.session, pair: j.pair,
        choice: j.choice, rater: state.rater, time: j.time });
    }).join("\n") + (state.judgements.length ? "\n" : "");
  }

  byId("who").addEventListener("submit", function (event) {
    event.preventDefault();
    var name = byId("rater").value.trim();
    if (!name) { return; }
    state.rater = cyrb53(name);
    byId("rater").blur();  // the keys judge once the rater has started
    save();
    show();
  });
  document.addEventListener("keydown", function (event) {
    if (event.target && event.target.tagName === "INPUT") { return; }
    if (event.key === "u") { undo(); event.preventDefault(); return; }
    var choice = KEYS[event.key];
    if (choice) { choose(choice); event.preventDefault(); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-choice]"), function (button) {
    button.addEventListener("click", function () { choose(button.getAttribute("data-choice")); });
  });
  byId("undo").addEventListener("click", undo);
  byId("export-button").addEventListener("click", function () {
    var text = exported();
    byId("export").value = text;
    var link = byId("download");
    link.href = "data:application/jsonl;charset=utf-8," + encodeURIComponent(text);
    link.hidden = false;
  });
  show();
}());
