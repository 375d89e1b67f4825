// The operator console: an overview (servers and their health, the principal's sessions, everything
// pending) and a page per session (its tools, what it waits for, its calls, its events, live). The approvals
// inbox is on every page, pushed by WatchEvents on session "approvals". Hash routes: #/ and #/sessions/{id}.
// Plain ES modules, no build step.

import { h, u, replace, enumLabel, shortTime, json } from './dom.js';
import { auth, call, listAll, stream, paths, APIError } from './api.js';
import { PendingList, kindOf } from './pending.js';
import { SchemaForm } from './schemaform.js';
import { toolResult, apiError } from './content.js';
import { signIn, finishSignIn, payload } from './oidc.js';
import { plain, warning } from './untrusted.js';
import * as calls from './calls.js';
import { inspector } from './mcp.js';

const view = document.getElementById('view');
const notice = document.getElementById('notice');
const announcer = document.getElementById('announcer');

// The capabilities the console declares for the sessions it opens: it answers sampling and elicitation
// (form and URL) through a person. No roots: a browser has no folders to expose.
const consoleCapabilities = { sampling: {}, elicitation: { form: true, url: true } };

// page is what the current route shows; leave() stops its streams and timers (never the person's calls).
let page = null;

function showNotice(err) {
  if (!err) { notice.hidden = true; notice.replaceChildren(); return; }
  notice.hidden = false;
  if (err instanceof APIError && err.unauthenticated) {
    replace(notice, h('p', {}, auth.token ? 'The bridge does not accept this token: paste another above and press Use. ' : 'The bridge wants a bearer token: paste one above and press Use. ',
      h('span', { class: 'hint' }, u(err.message))));
  } else {
    replace(notice, apiError(err));
  }
}

// announce tells a screen reader (aria-live) something new.
function announce(text) {
  announcer.textContent = '';
  announcer.textContent = plain(text);
}

// --- sign-in ---

// settings are the console's (config.json): sign-in at an identity provider, and how principals are named.
let settings = {};
// identity is GET /v1/identity's answer (principal, groups, approver), when the bridge has it.
let identity = null;

// principal names the principal the console acts as, for display (the bridge decides on every call): the
// bridge's own word when it has /v1/identity; else "local" without auth, a JWT's principal claim, or what is
// known.
function principal() {
  if (identity && identity.principal) return String(identity.principal);
  const p = settings.principals || {};
  if (!p.authenticated) return 'local';
  const token = auth.token;
  if (!token) return p.certificates ? "your certificate's principal" : '';
  if (p.claim && token.split('.').length === 3) {
    const v = payload(token)[p.claim];
    if (typeof v === 'string' && v) return v;
  }
  return "your token's principal";
}

function showSignedIn() {
  const who = principal();
  const el = document.getElementById('token-state');
  const extra = [];
  if (identity && Array.isArray(identity.groups) && identity.groups.length) extra.push(`groups ${identity.groups.join(', ')}`);
  if (identity && identity.approver) extra.push('approver');
  replace(el, who ? ['as ', u(who), extra.length ? ` (${extra.join('; ')})` : ''] : 'not signed in');
}

async function loadIdentity() {
  identity = null;
  try { identity = await call('GET', '/v1/identity'); } catch { /* a bridge without /v1/identity, or no token yet */ }
  showSignedIn();
}

function setupSignIn(oidc) {
  const input = document.getElementById('token');
  if (oidc) {
    const button = h('button', { type: 'button', id: 'oidc-signin', class: 'primary' }, 'Sign in');
    button.title = `at ${oidc.issuer}`;
    button.addEventListener('click', () => signIn(oidc).catch(showNotice));
    document.getElementById('signout').before(button);
  }
  document.getElementById('signin').addEventListener('submit', (ev) => {
    ev.preventDefault();
    auth.set(input.value.trim());
    input.value = '';
    signedInChanged();
  });
  document.getElementById('signout').addEventListener('click', () => { auth.set(''); signedInChanged(); });
  showSignedIn();
}

function signedInChanged() {
  showSignedIn();
  loadIdentity();
  inbox.restart();
  route();
}

// --- the approvals inbox, on every page ---

// inbox holds the tool calls waiting for this principal's approval (docs/adr/0080-approvals.md), pushed by
// WatchEvents on session "approvals"; decided ones stay below with their outcome. Its count shows in the
// header's badge and the tab's title; a desktop notification, when the person turned them on, says when one
// comes while the person is elsewhere (the tab hidden, or the window without focus).
const inbox = (() => {
  const panel = document.getElementById('inbox');
  const badge = document.getElementById('inbox-badge');
  const count = document.getElementById('inbox-count');
  const notify = document.getElementById('inbox-notify');
  let abort = new AbortController();
  const byCall = new Map(); // originCallId → the approval request, while it waits
  const list = new PendingList('No tool call waits for your approval.', {
    onAdd(card) {
      const a = card.req.approval || {};
      if (card.req.originCallId) byCall.set(card.req.originCallId, card.req);
      announce(`Approval wanted: ${a.caller || 'someone'} calls ${a.tool || 'a tool'} on ${a.serverName || 'a server'}.`);
      panel.open = true;
      // Only when the person is elsewhere (another tab, or another window in front): on the page, the inbox shows it.
      if ((document.hidden || !document.hasFocus()) && window.Notification && Notification.permission === 'granted') {
        new Notification('mcp-bridge: approval wanted', { body: plain(`${a.caller || ''} calls ${a.tool || ''} on ${a.serverName || ''}`) }); // eslint-disable-line no-new
      }
      linkCalls();
    },
    onChange() {
      for (const [id, req] of byCall) {
        const c = list.cards.get(req.requestId);
        if (!c || c.ended) byCall.delete(id);
      }
      const n = list.waiting;
      count.textContent = String(n);
      document.getElementById('inbox-noun').textContent = n === 1 ? 'approval' : 'approvals';
      badge.hidden = n === 0;
      badge.setAttribute('aria-label', `${n} approval${n === 1 ? '' : 's'} waiting`);
      updateTitle();
      linkCalls();
    },
  });
  const historyList = h('ol', { class: 'approval-history', id: 'approval-history' });
  const historyBox = h('details', { class: 'history', hidden: true }, h('summary', {}, 'Decided by anyone (the bridge\'s history)'), historyList);
  panel.append(list.element, historyBox);
  // The bridge's approvals history (GET /v1/approvals/history), when it has one: who decided what, when, why.
  async function loadHistory() {
    try {
      const r = await call('GET', '/v1/approvals/history?pageSize=20');
      const records = r.records || [];
      replace(historyList, records.map((rec) => h('li', {},
        h('time', {}, shortTime(rec.endTime || rec.createTime)), ' ', h('strong', {}, enumLabel(rec.outcome, 'APPROVAL_OUTCOME_')), ' ',
        u(rec.caller || ''), ' → ', h('code', {}, u(rec.tool || '')), ' on ', u(rec.serverName || ''),
        rec.decidedBy ? [' by ', u(rec.decidedBy)] : '', rec.reason ? [' — ', u(rec.reason)] : '',
        ' ', h('code', { class: 'hint' }, String(rec.argumentsSha256 || '').slice(0, 12)))));
      if (!records.length) replace(historyList, h('li', { class: 'hint' }, 'Nothing decided yet.'));
      historyBox.hidden = false;
    } catch { historyBox.hidden = true; /* a bridge without the history, or not an approver */ }
  }
  // Fresh whenever the person opens the inbox or its history (a decision made since is in it then).
  panel.addEventListener('toggle', () => { if (panel.open) loadHistory(); });
  historyBox.addEventListener('toggle', () => { if (historyBox.open) loadHistory(); });
  notify.hidden = !window.Notification || Notification.permission === 'granted';
  notify.addEventListener('click', async () => {
    const p = await Notification.requestPermission();
    notify.hidden = p === 'granted';
  });

  // linkCalls tells the person's own running calls which approval they wait for (allowSelf: the person
  // approves here, in the same tab).
  function linkCalls() {
    for (const c of calls.running()) {
      const req = byCall.get(c.callId) || null;
      if (c.approval !== req) { c.approval = req; c.changed(); }
    }
  }

  async function watch(signal) {
    while (!signal.aborted) {
      try {
        await stream(paths.events('approvals'), (ev) => {
          if (ev.serverRequest) list.add(ev.serverRequest);
          if (ev.requestEnded) list.ended(ev.requestEnded.requestId, ev.requestEnded.outcome, ev.requestEnded.detail);
        }, signal);
      } catch (e) {
        if (signal.aborted) return;
        // Not an approver, or not signed in: nothing to show, nothing to retry until the sign-in changes.
        if (e instanceof APIError && (e.unauthenticated || e.httpStatus === 403 || e.httpStatus === 404)) return;
      }
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, 2000)); // the stream broke (a restart): again, after a pause
    }
  }

  badge.addEventListener('click', () => show());

  // show opens the inbox and puts the focus on the first request waiting.
  function show() {
    panel.open = true;
    const first = [...list.cards.values()].find((c) => !c.ended);
    const target = first ? first.element.querySelector('button, input') : panel.querySelector('summary');
    if (target) target.focus();
    panel.scrollIntoView({ block: 'start' });
  }

  return {
    list,
    show,
    get waiting() { return list.waiting; },
    restart() { abort.abort(); abort = new AbortController(); watch(abort.signal); },
  };
})();

// updateTitle puts the number of things waiting for the person in the tab's title.
function updateTitle() {
  const n = inbox.waiting + (page && page.waiting ? page.waiting() : 0);
  document.title = n ? `(${n}) mcp-bridge console` : 'mcp-bridge console';
}

// --- overview ---

// healthBadge shows a server's health as /readyz reports it (grpc.health.v1 statuses of the MCP client core).
function healthBadge(status) {
  const st = String(status || 'UNKNOWN');
  const label = { SERVING: 'serving', NOT_SERVING: 'not serving', UNKNOWN: 'not tried yet' }[st] || st.toLowerCase();
  const title = {
    SERVING: 'a session to it is ready, or the last one opened',
    NOT_SERVING: 'its sessions are reconnecting, or the last open could not reach it',
    UNKNOWN: 'no session to it is open and none was tried yet',
  }[st] || '';
  return h('span', { class: `health health-${st.toLowerCase()}`, title, 'data-health': st }, label);
}

// syncRows makes tbody hold one row per item, keyed, redrawing only a row whose content changed: a row the
// person is on (focus, a pressed button) stays the same element across refreshes.
function syncRows(tbody, items, key, render, empty) {
  const old = new Map([...tbody.children].filter((r) => r.dataset.key !== undefined).map((r) => [r.dataset.key, r]));
  const rows = items.map((it) => {
    const sig = JSON.stringify(it);
    const k = String(key(it));
    const prev = old.get(k);
    if (prev && prev.dataset.sig === sig) return prev;
    const row = render(it);
    row.dataset.key = k;
    row.dataset.sig = sig;
    if (prev && prev.contains(document.activeElement)) {
      // Keep the person where they were: the same control of the new row.
      const idx = [...prev.querySelectorAll('a, button')].indexOf(document.activeElement);
      queueMicrotask(() => { const t = row.querySelectorAll('a, button')[idx]; if (t) t.focus(); });
    }
    return row;
  });
  if (!items.length) { replace(tbody, empty); return; }
  rows.forEach((r, i) => { if (tbody.children[i] !== r) tbody.insertBefore(r, tbody.children[i] || null); });
  while (tbody.children.length > rows.length) tbody.lastElementChild.remove();
}

// Column headings of the overview's tables. On a narrow screen the tables reflow into stacked rows, each
// cell labelled with its heading (data-label, console.css), so no control ends up past the right edge.
const SERVER_COLUMNS = ['Name', 'Transport', 'Health', 'Description', ''];
const SESSION_COLUMNS = ['Session', 'Server', 'Principal', 'State', 'Protocol', 'Pending', 'Created'];

// labelled gives each cell of row the heading of its column, for the stacked layout.
function labelled(row, headings) {
  [...row.children].forEach((td, i) => { td.dataset.label = headings[i] || ''; });
  return row;
}

// overviewPending holds the requests of all the principal's sessions across visits of the overview, so that
// an answer being typed is still there after a look at another page.
const overviewPending = new PendingList('Nothing is waiting for you.', {
  onAdd(card) { if (card.kind !== 'approval') announce(`New ${card.kind} request.`); },
  onChange: () => updateTitle(),
});

function overview() {
  const abort = new AbortController();
  const servers = h('tbody');
  const sessions = h('tbody');
  const creating = h('div', { class: 'creating', role: 'status' });
  let timer = 0;
  let opening = false;

  async function refresh() {
    try {
      const [srv, sess, reqs, ready] = await Promise.all([
        call('GET', paths.servers(), undefined, abort.signal),
        listAll(paths.sessions(), 'sessions'),
        call('GET', paths.requests('-'), undefined, abort.signal),
        fetch('/readyz', { cache: 'no-store', signal: abort.signal }).then((r) => r.json()).catch(() => ({})),
      ]);
      if (abort.signal.aborted) return;
      showNotice(null);
      const health = (ready && ready.servers) || {};
      const list = (srv.servers || []).map((s) => ({ ...s, health: health[s.name] }));
      syncRows(servers, list, (s) => s.name, (s) => labelled(h('tr', { 'data-server': s.name },
        h('td', {}, h('strong', {}, u(s.name))),
        h('td', {}, enumLabel(s.transport, 'TRANSPORT_')),
        h('td', {}, healthBadge(s.health)),
        h('td', {}, s.description ? u(s.description) : ''),
        h('td', { class: 'action' }, h('button', { type: 'button', class: 'primary', onclick: (ev) => openSession(s.name, ev.currentTarget) }, 'Open session'))), SERVER_COLUMNS),
      h('tr', {}, h('td', { colspan: 5, class: 'hint' }, 'No server you may use.')));
      const count = {};
      for (const r of reqs.requests || []) count[r.sessionId] = (count[r.sessionId] || 0) + 1;
      const who = principal() || '—';
      syncRows(sessions, sess.map((s) => ({ ...s, pending: count[s.sessionId] || 0, who })), (s) => s.sessionId, (s) => labelled(h('tr', { 'data-session': s.sessionId },
        h('td', {}, h('a', { href: `#/sessions/${encodeURIComponent(s.sessionId)}` }, h('code', {}, u(s.sessionId)))),
        h('td', {}, u(s.server || '')),
        h('td', { class: 'principal' }, u(s.who)),
        h('td', {}, h('span', { class: `state state-${enumLabel(s.state, 'SESSION_STATE_')}` }, enumLabel(s.state, 'SESSION_STATE_')),
          s.stateReason ? h('span', { class: 'hint' }, ' ', u(s.stateReason)) : null),
        h('td', {}, u(s.protocolVersion || '')),
        h('td', { class: 'num' }, String(s.pending)),
        h('td', {}, shortTime(s.createTime))), SESSION_COLUMNS),
      h('tr', {}, h('td', { colspan: 7, class: 'hint' }, 'You have no sessions.')));
      // Approval requests show in the inbox, above every page.
      overviewPending.sync((reqs.requests || []).filter((r) => !r.approval));
      servers.parentElement.dataset.refreshes = String((Number(servers.parentElement.dataset.refreshes) || 0) + 1);
    } catch (e) {
      if (e.name !== 'AbortError') showNotice(e);
    }
  }

  async function openSession(server, button) {
    if (opening) return; // a double click opens one session
    opening = true;
    for (const b of servers.querySelectorAll('button')) b.disabled = true;
    replace(creating, `Opening a session to ${server}… (a sign-in the server needs shows under Waiting for you)`);
    const poll = setInterval(refresh, 1500); // an authorization request appears while CreateSession runs
    try {
      const resp = await call('POST', paths.sessions(), { server, hostCapabilities: consoleCapabilities });
      // REST answers with the Session itself (the RPC's response_body); gRPC wraps it in `session`.
      const session = resp.session || resp;
      location.hash = `#/sessions/${encodeURIComponent(session.sessionId)}`;
    } catch (e) {
      replace(creating, apiError(e));
      if (button) button.focus();
    } finally {
      clearInterval(poll);
      opening = false;
      for (const b of servers.querySelectorAll('button')) b.disabled = false;
    }
  }

  replace(view,
    h('section', {}, h('h2', {}, 'Servers'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'servers', class: 'stack' }, h('thead', {}, h('tr', {}, SERVER_COLUMNS.map((t) => h('th', {}, t)))), servers)),
      creating),
    h('section', {}, h('h2', {}, 'Waiting for you'), overviewPending.element),
    h('section', {}, h('h2', {}, 'Your sessions'),
      h('p', { class: 'hint' }, 'Only your own sessions: a session belongs to the principal that opened it.'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'sessions', class: 'stack' }, h('thead', {}, h('tr', {}, SESSION_COLUMNS.map((t) => h('th', {}, t)))), sessions))));
  refresh();
  timer = setInterval(refresh, 5000);
  return { leave() { clearInterval(timer); abort.abort(); }, waiting: () => overviewPending.waiting };
}

// --- one session ---

// dataText is a log message's data as text: a string as it is, anything else as JSON, nothing as nothing
// (never a literal "null").
function dataText(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function eventSummary(ev) {
  if (ev.serverRequest) {
    const r = ev.serverRequest;
    const kind = kindOf(r);
    return [kind, [`${kind} request ${r.requestId}`, r.originName ? [' from ', u(r.originName)] : '']];
  }
  if (ev.requestEnded) return ['ended', [`${ev.requestEnded.requestId}: ${enumLabel(ev.requestEnded.outcome, 'REQUEST_OUTCOME_')}`, ev.requestEnded.detail ? [' — ', u(ev.requestEnded.detail)] : '']];
  if (ev.progress) return ['progress', [`${ev.progress.progress ?? 0}${ev.progress.total ? ` / ${ev.progress.total}` : ''} `, u(ev.progress.message || '')]];
  if (ev.log) return ['log', [`${enumLabel(ev.log.level, 'LOGGING_LEVEL_')}`, ev.log.logger ? [' ', u(ev.log.logger)] : '', ': ', u(dataText(ev.log.data))]];
  if (ev.sessionState) return ['state', [enumLabel(ev.sessionState.state, 'SESSION_STATE_'), ev.sessionState.reason ? [' — ', u(ev.sessionState.reason)] : '']];
  if (ev.eventsDropped) return ['dropped', `${ev.eventsDropped.count} events dropped (the console read too slowly)`];
  const kind = Object.keys(ev).find((k) => !['sequence', 'sessionId', 'time'].includes(k)) || 'event';
  return [kind, u(JSON.stringify(ev[kind]) ?? '')];
}

// sessions keeps, per session, what must outlive a visit of its page: its waiting requests (with what the
// person typed into them) and its event history (the newest KEEP_EVENTS).
const KEEP_EVENTS = 500;
const sessionsKept = new Map();
function kept(id) {
  if (!sessionsKept.has(id)) {
    sessionsKept.set(id, {
      pending: new PendingList('Nothing is waiting for you in this session.', {
        onAdd(card) { announce(`New ${card.kind} request in this session.`); },
        onChange: () => updateTitle(),
      }),
      log: h('ol', { class: 'events', id: 'events' }),
      seen: new Set(),
      toolInput: new Map(), // tool name → what its form held when the page was left
    });
  }
  return sessionsKept.get(id);
}

function sessionPage(id) {
  const abort = new AbortController();
  const k = kept(id);
  const { pending, log } = k;
  const info = h('div', { class: 'session-info' }, h('p', { class: 'hint' }, 'Loading…'));
  const gone = h('div', { class: 'gone', role: 'alert', hidden: true });
  const tools = h('div', { class: 'tools' });
  const history = h('ol', { class: 'call-history', id: 'call-history' });
  const live = h('span', { class: 'live' }, 'connecting…');
  let server = '';
  const unsubscribe = [];
  const forms = new Map(); // tool name → its form on this visit

  function addEvent(ev) {
    // A reconnection sends the pending requests again: one line each.
    const key = ev.sequence ? `seq-${ev.sequence}` : null;
    if (key && k.seen.has(key)) return;
    if (key) k.seen.add(key);
    const [kind, text] = eventSummary(ev);
    log.append(h('li', { class: `event event-${kind}`, 'data-kind': kind },
      h('span', { class: 'seq' }, String(ev.sequence || '')), h('time', {}, shortTime(ev.time)), h('span', { class: 'kind' }, kind), h('span', { class: 'text' }, text)));
    while (log.childElementCount > KEEP_EVENTS) log.firstElementChild.remove();
    if (ev.serverRequest && !ev.serverRequest.approval) pending.add(ev.serverRequest);
    if (ev.requestEnded) pending.ended(ev.requestEnded.requestId, ev.requestEnded.outcome, ev.requestEnded.detail);
    if (ev.sessionState) loadInfo();
  }

  // showGone says the session no longer exists and offers a way on.
  function showGone(err) {
    live.textContent = 'gone';
    live.className = 'live off';
    const st = document.getElementById('session-state');
    if (st) { st.textContent = 'gone'; st.className = 'state state-closed'; }
    replace(gone,
      h('p', {}, h('strong', {}, 'This session is gone. '), 'It was closed, it expired, or the bridge restarted without it; nothing more happens in it.'),
      h('p', { class: 'hint' }, u(err && err.message ? err.message : '')),
      h('div', { class: 'actions' },
        server ? h('button', { type: 'button', class: 'primary', onclick: () => reopen() }, `Open a new session to ${server}`) : null,
        h('a', { class: 'button', href: '#/' }, 'Back to the overview')));
    gone.hidden = false;
  }

  async function reopen() {
    try {
      const resp = await call('POST', paths.sessions(), { server, hostCapabilities: consoleCapabilities });
      const session = resp.session || resp;
      location.hash = `#/sessions/${encodeURIComponent(session.sessionId)}`;
    } catch (e) { showNotice(e); }
  }

  const isGone = (e) => e instanceof APIError && (e.httpStatus === 404 || e.reason === 'SESSION_NOT_FOUND' || e.reason === 'SESSION_CLOSED');

  // watch follows the session's events until the page is left, reconnecting after a break.
  async function watch() {
    while (!abort.signal.aborted) {
      try {
        live.textContent = 'live';
        live.className = 'live on';
        await stream(paths.events(id), addEvent, abort.signal);
      } catch (e) {
        if (abort.signal.aborted) return;
        if (isGone(e)) { showGone(e); return; }
        live.textContent = 'disconnected: ';
        live.append(u(e.message));
        live.className = 'live off';
        if (e instanceof APIError && (e.unauthenticated || e.httpStatus === 403)) return;
      }
      if (abort.signal.aborted) return;
      // The stream ended: the session may be gone (a restart), or the connection broke.
      try {
        const r = await call('GET', paths.session(id), undefined, abort.signal);
        const s = r.session || r;
        if (s.state === 'SESSION_STATE_CLOSED') { showGone({ message: s.stateReason || 'the session is closed' }); return; }
      } catch (e) {
        if (isGone(e)) { showGone(e); return; }
      }
      live.textContent = 'reconnecting…';
      live.className = 'live off';
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  let closing = false;
  async function loadInfo() {
    try {
      const resp = await call('GET', paths.session(id), undefined, abort.signal);
      const s = resp.session || resp; // REST answers with the Session itself (response_body)
      const si = s.serverInfo || {};
      server = String(s.server || '');
      if (s.state === 'SESSION_STATE_CLOSED') setTimeout(() => showGone({ message: s.stateReason || 'the session is closed' }));
      const confirmClose = h('div', { class: 'confirm', hidden: true },
        h('p', {}, 'Close this session? Its calls end and what it waits for is refused.'),
        h('div', { class: 'actions' },
          h('button', {
            type: 'button', class: 'danger close-confirm', onclick: async (ev) => {
              if (closing) return;
              closing = true;
              ev.currentTarget.disabled = true;
              try { await call('DELETE', paths.session(id)); location.hash = '#/'; } catch (e) { showNotice(e); } finally { closing = false; }
            },
          }, 'Yes, close it'),
          h('button', { type: 'button', onclick: () => { confirmClose.hidden = true; closeButton.focus(); } }, 'Keep it')));
      const closeButton = h('button', {
        type: 'button', class: 'danger close-session', onclick: () => { confirmClose.hidden = false; confirmClose.querySelector('.close-confirm').focus(); },
      }, 'Close session');
      const focused = info.contains(document.activeElement) ? document.activeElement.className : null;
      replace(info,
        h('dl', {},
          h('dt', {}, 'Server'), h('dd', {}, u(server)),
          h('dt', {}, 'Principal'), h('dd', { id: 'session-principal' }, u(principal() || '—')),
          h('dt', {}, 'State'), h('dd', {}, h('span', { class: `state state-${enumLabel(s.state, 'SESSION_STATE_')}`, id: 'session-state' }, enumLabel(s.state, 'SESSION_STATE_')),
            s.stateReason ? [' — ', u(s.stateReason)] : ''),
          h('dt', {}, 'Protocol'), h('dd', {}, u(s.protocolVersion || '')),
          h('dt', {}, 'Server info'), h('dd', { id: 'server-info' }, u(si.title || si.name || ''), ' ', u(si.version || '')),
          h('dt', {}, 'Restarts'), h('dd', {}, String(s.restarts || 0)),
          h('dt', {}, 'You answer'), h('dd', {}, Object.keys(s.hostCapabilities || {}).join(', ') || 'nothing')),
        s.instructions ? h('details', {}, h('summary', {}, 'Instructions'), h('pre', {}, u(s.instructions))) : null,
        h('div', { class: 'actions' }, closeButton), confirmClose);
      const warn = warning(info);
      if (warn) info.prepend(warn);
      if (focused) { const t = info.querySelector(`.${focused.split(' ').filter(Boolean).join('.')}`); if (t) t.focus(); }
      showNotice(null);
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (isGone(e)) showGone(e); else showNotice(e);
    }
  }

  async function loadTools() {
    try {
      const list = await listAll(paths.tools(id), 'tools');
      replace(tools, list.map(toolCard));
      if (!list.length) replace(tools, h('p', { class: 'hint' }, 'The server offers no tools (or none you may use).'));
    } catch (e) {
      if (isGone(e)) showGone(e);
      replace(tools, apiError(e));
    }
  }

  function drawHistory() {
    const entries = calls.history(id);
    replace(history, entries.map((e) => h('li', { 'data-call-id': e.callId, 'data-state': e.state },
      h('time', {}, shortTime(e.startTime)), ' ', h('code', {}, u(e.tool)), ' ', h('span', { class: 'summary' }, u(e.summary)), ' ', h('code', { class: 'hint' }, e.callId))));
    if (!entries.length) replace(history, h('li', { class: 'hint' }, 'No calls yet in this tab.'));
  }

  // showCall draws a call into a tool card's result area and keeps it current while the page shows.
  function showCall(c, result, form, run, cancel) {
    const draw = () => {
      run.disabled = c.state === 'running';
      cancel.hidden = c.state !== 'running';
      if (c.state === 'running') {
        const p = c.progress;
        const status = h('p', { class: 'hint running' }, p ? `Running… ${p.progress || 0}${p.total ? ` of ${p.total}` : ''}` : 'Running… (what the server asks meanwhile shows under Waiting for you)',
          p && p.message ? [' — ', u(p.message)] : '');
        const bar = h('progress', { class: 'progress' });
        if (p && p.total) { bar.max = p.total; bar.value = p.progress || 0; }
        const waits = c.approval || c.pendingEvent;
        let approval = null;
        if (waits) {
          const a = c.approval ? c.approval.approval || {} : c.pendingEvent;
          const expiry = (c.approval && c.approval.deadline) || (c.pendingEvent && (c.pendingEvent.expireTime || c.pendingEvent.deadline));
          // ApprovalPending.approvers, or the approval request's own (ApprovalRequest.approvers).
          const ap = (c.pendingEvent && c.pendingEvent.approvers) || (c.approval && c.approval.approval && c.approval.approval.approvers) || null;
          const approvers = ap ? [...(ap.principals || []), ...(ap.groups || []).map((g) => `group ${g}`), ap.allowSelf ? 'you (allowSelf)' : null].filter(Boolean) : null;
          approval = h('div', { class: 'waits-approval', role: 'status' },
            h('strong', {}, 'Waiting for approval'),
            a.rule ? [' · rule ', h('code', {}, u(a.rule))] : '',
            approvers && approvers.length ? [' · who may approve: ', u(approvers.join(', '))] : '',
            expiry ? [' · expires at ', new Date(expiry).toLocaleTimeString()] : '',
            c.approval ? h('p', {}, 'You may approve it yourself: ', h('button', { type: 'button', class: 'to-inbox', onclick: () => inbox.show() }, 'Go to the approval'), '.') : null);
        }
        const logs = h('ol', { class: 'call-log' }, c.logs.map((l) => h('li', {}, h('span', { class: 'kind' }, enumLabel(l.level, 'LOGGING_LEVEL_')), ' ',
          u(dataText(l.data)))));
        replace(result, approval, status, bar, logs, h('p', { class: 'hint' }, 'Call ', h('code', {}, c.callId)));
        return;
      }
      const logs = c.logs.length ? h('ol', { class: 'call-log' }, c.logs.map((l) => h('li', {}, h('span', { class: 'kind' }, enumLabel(l.level, 'LOGGING_LEVEL_')), ' ',
        u(dataText(l.data))))) : null;
      if (c.state === 'done') replace(result, c.result ? toolResult(c.result) : h('p', { class: 'hint' }, 'The call ended without a result.'), logs);
      else if (c.state === 'cancelled') replace(result, h('p', { class: 'hint cancelled' }, 'Cancelled: the bridge told the server to stop.'));
      else {
        if (form && c.error.fieldViolations) form.showErrors(c.error.fieldViolations, '');
        // A call taken up again after a reload whose outcome is lost: calls are detached (ADR 0105), so the
        // reload did not cut it off — the bridge restarted, or the call ran out of time, while the server ran it.
        const lost = c.resumed && c.error.reason === 'CALL_OUTCOME_UNKNOWN'
          ? h('p', { class: 'lost' }, h('strong', {}, 'This call was cut off while the server ran it. '),
            'Whether the server finished its work cannot be known (the bridge restarted, or the call ran out of time). Check before you run it again.')
          : null;
        replace(result, lost, apiError(c.error), logs);
      }
    };
    draw();
    unsubscribe.push(c.on(draw));
  }

  // toolCard is a tool with a form from its input schema. Run streams the call (StreamCallTool) with a call
  // id; the call belongs to the page, not this view (calls.js), so it goes on when the person looks
  // elsewhere, and shows here again on return. Cancel ends the request, which the bridge turns into an MCP
  // cancellation upstream.
  function toolCard(tool) {
    const result = h('div', { class: 'tool-result', 'aria-live': 'polite' });
    // The tool's newest call (this page's, or one taken up after a reload).
    const prev = calls.latest(id, tool.name);
    // The form starts from what it held when the page was left, else from the arguments of that call.
    const form = new SchemaForm(tool.inputSchema || {}, { pathPrefixes: ['arguments.'], initial: k.toolInput.get(tool.name) || (prev && prev.args) || null });
    forms.set(tool.name, form);
    const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
    const cancel = h('button', { type: 'button', class: 'cancel', hidden: true }, 'Cancel');
    let current = null;
    cancel.addEventListener('click', () => { if (current) current.cancel(); });
    form.actions.append(run, cancel);
    form.element.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (current && current.state === 'running') return; // a double submit starts one call
      const args = form.values();
      if (args === null) return;
      current = calls.start(id, tool.name, args);
      showCall(current, result, form, run, cancel);
      drawHistory();
    });
    const ann = tool.annotations || {};
    const hints = [ann.readOnlyHint ? 'read-only' : null, ann.destructiveHint ? 'destructive' : null, ann.idempotentHint ? 'idempotent' : null].filter(Boolean);
    // Tool.approval: the bridge says a call of this tool waits for a person's approval.
    const needsApproval = tool.approval ? h('span', { class: 'needs-approval', title: tool.approval.rule ? plain(`rule ${tool.approval.rule}`) : 'a person approves each call' }, 'needs approval') : null;
    const card = h('details', { class: 'card tool', 'data-tool': tool.name },
      h('summary', {}, h('code', { class: 'tool-name' }, u(tool.name)), tool.title ? [' ', u(tool.title)] : '',
        hints.length ? h('span', { class: 'hint' }, ` (${hints.join(', ')})`) : null, needsApproval ? [' ', needsApproval] : null),
      h('p', { class: 'description' }, u(tool.description || '')),
      form.element,
      result,
      tool.outputSchema ? h('details', {}, h('summary', {}, 'Output schema'), h('pre', {}, json(tool.outputSchema))) : null);
    // A tool whose name, title or description holds what a person cannot see says so on its card.
    const warn = warning(card);
    if (warn) {
      const summary = card.querySelector('summary');
      summary.after(warn);
      summary.append(h('span', { class: 'warn-flag' }, ' ⚠ hidden characters'));
    }
    if (prev) {
      current = prev;
      card.open = true;
      showCall(prev, result, form, run, cancel);
    }
    return card;
  }

  replace(view,
    h('p', {}, h('a', { href: '#/' }, '← Overview')),
    h('h2', {}, 'Session ', h('code', { id: 'session-id' }, id)),
    gone,
    info,
    h('section', {}, h('h2', {}, 'Waiting for you'), pending.element),
    h('section', {}, h('h2', {}, 'Tools'), tools),
    h('section', {}, h('h2', {}, 'Resources, prompts, log level'), inspector(id)),
    h('section', {}, h('h2', {}, 'Calls'), history),
    h('section', {}, h('h2', {}, 'Events ', live), log));
  calls.resumeLost(id);
  drawHistory();
  unsubscribe.push(calls.watchAll((c) => { if (c.sessionId === id) drawHistory(); }));
  loadInfo();
  loadTools();
  // Requests that ended while the page showed something else.
  call('GET', paths.requests(id), undefined, abort.signal).then((r) => pending.sync((r.requests || []).filter((q) => !q.approval))).catch(() => {});
  watch();
  return {
    leave() {
      abort.abort();
      for (const f of unsubscribe) f();
      for (const [name, form] of forms) k.toolInput.set(name, form.snapshot()); // what was typed stays
    },
    waiting: () => pending.waiting,
  };
}

// --- routing ---

function route() {
  if (page) page.leave();
  showNotice(null);
  const m = /^#\/sessions\/([^/]+)$/.exec(location.hash);
  page = m ? sessionPage(decodeURIComponent(m[1])) : overview();
  updateTitle();
}

// start reads the console's settings, finishes a sign-in at the identity provider if this page load is its
// redirect back, and shows the page the address names.
async function start() {
  try {
    settings = await (await fetch('config.json', { cache: 'no-store' })).json();
  } catch { /* no settings: tokens are pasted, principals unknown */ }
  setupSignIn(settings.oidc);
  let signInError = null;
  if (settings.oidc) {
    try {
      const token = await finishSignIn(settings.oidc);
      if (token) auth.set(token);
    } catch (e) {
      signInError = e;
    }
  }
  showSignedIn();
  loadIdentity();
  inbox.restart();
  calls.resumeAll(); // the person's calls of before a reload, on whichever page it landed
  window.addEventListener('hashchange', route);
  route();
  if (signInError) showNotice(signInError);
}

start();
