"""Requests that never pass through interception, reported to the network log anyway.

Request interception (:mod:`recon.render.serve`) logs every HTTP request and web socket
of a page, its frames and its popups. A few APIs open sockets below it: WebRTC (ICE
servers: ``stun:`` over UDP, ``turn:`` over UDP or TCP), WebTransport, the
``dns-prefetch`` and ``preconnect`` resource hints, and a worker's web socket. None of
them reaches anything (the browser's network namespace is empty,
:mod:`recon.render.netns`); this module makes them visible as ``blocked`` entries of the
capture's network log, the policy evidence.

A script run in every frame before the page's own (:data:`REPORT_JS`) wraps the
``RTCPeerConnection`` and ``WebTransport`` constructors and
``RTCPeerConnection.prototype.setConfiguration``, and watches the document for ``<link>``
hints; a worker's web sockets come from playwright's ``websocket`` event. The script
reports through a playwright binding that it takes and deletes from the
page's globals before any page script runs, and it reads the configuration once and
passes that copy on, so a getter can't show it one server and the browser another. The
report is evidence, not the boundary: a page that evades it still reaches nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from playwright.sync_api import BrowserContext, Page, WebSocket

from recon.render.serve import Log, NetworkEvent

BINDING = "__reconBlocked"
URL_LIMIT = 2048  # characters of a reported address kept in the log


def report_side_channels(context: BrowserContext, log: Log, *, after: str = "") -> None:
    """Log, as ``blocked``, every side-channel address the context's pages try.

    ``after``: a script of the caller's, run in every frame right after the report's, in
    the same init script (one round trip to the browser fewer than a script of its own),
    and run even if the report's throws (``finally``), as a script of its own would be.
    """
    context.expose_binding(BINDING, _reporter(log))
    report = REPORT_JS % {"binding": BINDING}
    context.add_init_script(f"try {{\n{report}\n}} finally {{\n{after}\n}}" if after else report)
    context.on("page", partial(_watch_workers, log))


def _watch_workers(log: Log, page: Page) -> None:
    """Web sockets of a page's workers, which ``route_web_socket`` does not see."""
    page.on("websocket", lambda ws: _socket(log, ws))


def _socket(log: Log, ws: WebSocket) -> None:
    log(NetworkEvent(ws.url[:URL_LIMIT], "blocked"))


def _reporter(log: Log) -> Callable[[object, object], None]:
    def report(_source: object, address: object) -> None:
        if isinstance(address, str) and address:
            log(NetworkEvent(address[:URL_LIMIT], "blocked"))

    return report


REPORT_JS = """(() => {
  const report = globalThis.%(binding)s;
  delete globalThis.%(binding)s;
  if (typeof report !== 'function') return;
  const apply = Reflect.apply, construct = Reflect.construct, isArray = Array.isArray;
  const test = RegExp.prototype.test;
  const send = (address) => { try { report(String(address)); } catch (e) {} };
  const list = (value) => (value == null ? [] : isArray(value) ? [...value] : [value]);
  const servers = (config) => {  // read once; what is reported is what the browser gets
    if (config == null || typeof config !== 'object') return config;
    const copy = {...config};
    copy.iceServers = list(copy.iceServers).map((server) => {
      if (server == null || typeof server !== 'object') return server;
      const own = {...server, urls: list(server.urls).map(String)};
      own.urls.forEach(send);
      return own;
    });
    return copy;
  };
  const wrap = (name, seen) => {
    const Native = globalThis[name];
    if (typeof Native !== 'function') return null;
    const Wrapped = new Proxy(Native, {
      construct: (target, args, newTarget) => construct(target, seen([...args]), newTarget),
    });
    Object.defineProperty(Native.prototype, 'constructor', {value: Wrapped, writable: true,
      configurable: true});
    globalThis[name] = Wrapped;
    return Native;
  };
  const Peer = wrap('RTCPeerConnection', (args) => { args[0] = servers(args[0]); return args; });
  if (Peer) {
    globalThis.webkitRTCPeerConnection = globalThis.RTCPeerConnection;
    const setConfiguration = Peer.prototype.setConfiguration;
    Peer.prototype.setConfiguration = function setConfiguration_(config) {
      return apply(setConfiguration, this, [servers(config)]);
    };
  }
  wrap('WebTransport', (args) => { args[0] = String(args[0]); send(args[0]); return args; });
  const getter = (name) => Object.getOwnPropertyDescriptor(HTMLLinkElement.prototype, name).get;
  const rel = getter('rel'), href = getter('href');
  const links = Element.prototype.querySelectorAll;
  const hint = /(^|\\s)(dns-prefetch|preconnect)(\\s|$)/i;
  const check = (node) => {
    let kind;
    try { kind = apply(rel, node, []); } catch (e) { return; }  // not a <link>
    const url = apply(href, node, []);
    if (url && apply(test, hint, [kind])) send(url);
  };
  const watch = (records) => {
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      check(record.target);
      for (let j = 0; j < record.addedNodes.length; j++) {
        const node = record.addedNodes[j];
        check(node);
        let found = [];
        try { found = apply(links, node, ['link']); } catch (e) {}
        for (let k = 0; k < found.length; k++) check(found[k]);
      }
    }
  };
  new MutationObserver(watch).observe(document, {subtree: true, childList: true,
    attributes: true, attributeFilter: ['rel', 'href']});
})();"""
