// The operator console: an overview (servers and their health, the principal's sessions, everything
// pending) and a page per session (its tools, what it waits for, its events, live). Hash routes: #/ and
// #/sessions/{id}. Plain ES modules, no build step.

import { h, replace, enumLabel, shortTime, json } from './dom.js';
import { auth, call, listAll, stream, paths, APIError } from './api.js';
import { PendingList, kindOf } from './pending.js';
import { SchemaForm } from './schemaform.js';
import { toolResult, apiError } from './content.js';
import { signIn, finishSignIn, payload } from './oidc.js';

const view = document.getElementById('view');
const notice = document.getElementById('notice');

// The capabilities the console declares for the sessions it opens: it answers sampling and elicitation
// (form and URL) through a person. No roots: a browser has no folders to expose.
const consoleCapabilities = { sampling: {}, elicitation: { form: true, url: true } };

// page is what the current route shows; leave() stops its streams and timers.
let page = null;

function showNotice(err) {
  if (!err) { notice.hidden = true; notice.replaceChildren(); return; }
  notice.hidden = false;
  if (err instanceof APIError && err.unauthenticated) {
    replace(notice, h('p', {}, 'The bridge wants a bearer token: paste one above and press Use. ', h('span', { class: 'hint' }, String(err.message))));
  } else {
    replace(notice, apiError(err));
  }
}

// --- sign-in ---

// settings are the console's (config.json): sign-in at an identity provider, and how principals are named.
let settings = {};

// principal names the principal the console acts as, for display (the bridge decides on every call): "local"
// without auth; a JWT's principal claim; otherwise what is known.
function principal() {
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
  document.getElementById('token-state').textContent = who ? `as ${who}` : 'not signed in';
}

function setupSignIn(oidc) {
  const input = document.getElementById('token');
  const show = showSignedIn;
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
    show();
    route();
  });
  document.getElementById('signout').addEventListener('click', () => { auth.set(''); show(); route(); });
  show();
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

function overview() {
  const abort = new AbortController();
  const servers = h('tbody');
  const sessions = h('tbody');
  const pending = new PendingList('Nothing is waiting for you.');
  const creating = h('div', { class: 'creating', role: 'status' });
  let timer = 0;

  async function refresh() {
    try {
      const [srv, sess, reqs, approvals, ready] = await Promise.all([
        call('GET', paths.servers(), undefined, abort.signal),
        listAll(paths.sessions(), 'sessions'),
        call('GET', paths.requests('-'), undefined, abort.signal),
        // Tool calls of others that this principal may approve (docs/adr/0080-approvals.md).
        call('GET', paths.requests('approvals'), undefined, abort.signal),
        fetch('/readyz', { cache: 'no-store', signal: abort.signal }).then((r) => r.json()).catch(() => ({})),
      ]);
      showNotice(null);
      const health = (ready && ready.servers) || {};
      replace(servers, (srv.servers || []).map((s) => h('tr', { 'data-server': s.name },
        h('td', {}, h('strong', {}, String(s.name))),
        h('td', {}, enumLabel(s.transport, 'TRANSPORT_')),
        h('td', {}, healthBadge(health[s.name])),
        h('td', {}, String(s.description || '')),
        h('td', {}, h('button', { type: 'button', class: 'primary', onclick: () => openSession(s.name) }, 'Open session')))));
      if (!(srv.servers || []).length) replace(servers, h('tr', {}, h('td', { colspan: 5, class: 'hint' }, 'No server you may use.')));
      const count = {};
      for (const r of reqs.requests || []) count[r.sessionId] = (count[r.sessionId] || 0) + 1;
      replace(sessions, sess.map((s) => h('tr', { 'data-session': s.sessionId },
        h('td', {}, h('a', { href: `#/sessions/${encodeURIComponent(s.sessionId)}` }, h('code', {}, String(s.sessionId)))),
        h('td', {}, String(s.server || '')),
        h('td', { class: 'principal' }, principal() || '—'),
        h('td', {}, h('span', { class: `state state-${enumLabel(s.state, 'SESSION_STATE_')}` }, enumLabel(s.state, 'SESSION_STATE_')),
          s.stateReason ? h('span', { class: 'hint' }, ` ${String(s.stateReason)}`) : null),
        h('td', {}, String(s.protocolVersion || '')),
        h('td', { class: 'num' }, String(count[s.sessionId] || 0)),
        h('td', {}, shortTime(s.createTime)))));
      if (!sess.length) replace(sessions, h('tr', {}, h('td', { colspan: 7, class: 'hint' }, 'You have no sessions.')));
      pending.sync([...(reqs.requests || []), ...(approvals.requests || [])]);
    } catch (e) {
      if (e.name !== 'AbortError') showNotice(e);
    }
  }

  async function openSession(server) {
    replace(creating, `Opening a session to ${server}… (a sign-in the server needs shows under Waiting for you)`);
    const poll = setInterval(refresh, 1500); // an authorization request appears while CreateSession runs
    try {
      const resp = await call('POST', paths.sessions(), { server, hostCapabilities: consoleCapabilities });
      // REST answers with the Session itself (the RPC's response_body); gRPC wraps it in `session`.
      const session = resp.session || resp;
      location.hash = `#/sessions/${encodeURIComponent(session.sessionId)}`;
    } catch (e) {
      replace(creating, apiError(e));
    } finally {
      clearInterval(poll);
    }
  }

  replace(view,
    h('section', {}, h('h2', {}, 'Servers'),
      h('table', { id: 'servers' }, h('thead', {}, h('tr', {}, ['Name', 'Transport', 'Health', 'Description', ''].map((t) => h('th', {}, t)))), servers),
      creating),
    h('section', {}, h('h2', {}, 'Waiting for you'), pending.element),
    h('section', {}, h('h2', {}, 'Your sessions'),
      h('p', { class: 'hint' }, 'Only your own sessions: a session belongs to the principal that opened it.'),
      h('table', { id: 'sessions' }, h('thead', {}, h('tr', {}, ['Session', 'Server', 'Principal', 'State', 'Protocol', 'Pending', 'Created'].map((t) => h('th', {}, t)))), sessions)));
  refresh();
  timer = setInterval(refresh, 5000);
  return { leave() { clearInterval(timer); abort.abort(); } };
}

// --- one session ---

function eventSummary(ev) {
  if (ev.serverRequest) {
    const r = ev.serverRequest;
    const kind = kindOf(r);
    return [kind, `${kind} request ${r.requestId}${r.originName ? ` from ${r.originName}` : ''}`];
  }
  if (ev.requestEnded) return ['ended', `${ev.requestEnded.requestId}: ${enumLabel(ev.requestEnded.outcome, 'REQUEST_OUTCOME_')}${ev.requestEnded.detail ? ` — ${ev.requestEnded.detail}` : ''}`];
  if (ev.progress) return ['progress', `${ev.progress.progress}${ev.progress.total ? ` / ${ev.progress.total}` : ''} ${ev.progress.message || ''}`];
  if (ev.log) return ['log', `${enumLabel(ev.log.level, 'LOGGING_LEVEL_')}${ev.log.logger ? ` ${ev.log.logger}` : ''}: ${typeof ev.log.data === 'string' ? ev.log.data : JSON.stringify(ev.log.data)}`];
  if (ev.sessionState) return ['state', `${enumLabel(ev.sessionState.state, 'SESSION_STATE_')}${ev.sessionState.reason ? ` — ${ev.sessionState.reason}` : ''}`];
  if (ev.eventsDropped) return ['dropped', `${ev.eventsDropped.count} events dropped (the console read too slowly)`];
  const kind = Object.keys(ev).find((k) => !['sequence', 'sessionId', 'time'].includes(k)) || 'event';
  return [kind, JSON.stringify(ev[kind])];
}

function sessionPage(id) {
  const abort = new AbortController();
  const info = h('div', { class: 'session-info' }, h('p', { class: 'hint' }, 'Loading…'));
  const pending = new PendingList('Nothing is waiting for you in this session.');
  const tools = h('div', { class: 'tools' });
  const log = h('ol', { class: 'events', id: 'events' });
  const live = h('span', { class: 'live' }, 'connecting…');

  function addEvent(ev) {
    const [kind, text] = eventSummary(ev);
    log.append(h('li', { class: `event event-${kind}`, 'data-kind': kind },
      h('span', { class: 'seq' }, String(ev.sequence || '')), h('time', {}, shortTime(ev.time)), h('span', { class: 'kind' }, kind), h('span', { class: 'text' }, text)));
    while (log.childElementCount > 500) log.firstElementChild.remove();
    if (ev.serverRequest) pending.add(ev.serverRequest);
    if (ev.requestEnded) pending.ended(ev.requestEnded.requestId, ev.requestEnded.outcome, ev.requestEnded.detail);
    if (ev.sessionState) loadInfo();
  }

  // watch follows the session's events until the page is left, reconnecting after a break.
  async function watch() {
    while (!abort.signal.aborted) {
      try {
        live.textContent = 'live';
        live.className = 'live on';
        await stream(paths.events(id), addEvent, abort.signal);
      } catch (e) {
        if (abort.signal.aborted) return;
        live.textContent = `disconnected: ${e.message}`;
        live.className = 'live off';
        if (e instanceof APIError && (e.httpStatus === 404 || e.unauthenticated || e.httpStatus === 403)) return;
      }
      if (abort.signal.aborted) return;
      live.textContent = 'reconnecting…';
      live.className = 'live off';
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  async function loadInfo() {
    try {
      const resp = await call('GET', paths.session(id), undefined, abort.signal);
      const s = resp.session || resp; // REST answers with the Session itself (response_body)
      const si = s.serverInfo || {};
      replace(info,
        h('dl', {},
          h('dt', {}, 'Server'), h('dd', {}, String(s.server || '')),
          h('dt', {}, 'Principal'), h('dd', { id: 'session-principal' }, principal() || '—'),
          h('dt', {}, 'State'), h('dd', {}, h('span', { class: `state state-${enumLabel(s.state, 'SESSION_STATE_')}`, id: 'session-state' }, enumLabel(s.state, 'SESSION_STATE_')),
            s.stateReason ? ` — ${String(s.stateReason)}` : ''),
          h('dt', {}, 'Protocol'), h('dd', {}, String(s.protocolVersion || '')),
          h('dt', {}, 'Server info'), h('dd', {}, `${String(si.title || si.name || '')} ${String(si.version || '')}`),
          h('dt', {}, 'Restarts'), h('dd', {}, String(s.restarts || 0)),
          h('dt', {}, 'You answer'), h('dd', {}, Object.keys(s.hostCapabilities || {}).join(', ') || 'nothing')),
        s.instructions ? h('details', {}, h('summary', {}, 'Instructions'), h('pre', {}, String(s.instructions))) : null,
        h('div', { class: 'actions' }, h('button', {
          type: 'button', class: 'danger', onclick: async () => {
            try { await call('DELETE', paths.session(id)); location.hash = '#/'; } catch (e) { showNotice(e); }
          },
        }, 'Close session')));
      showNotice(null);
    } catch (e) {
      if (e.name !== 'AbortError') showNotice(e);
    }
  }

  async function loadTools() {
    try {
      const list = await listAll(paths.tools(id), 'tools');
      replace(tools, list.map(toolCard));
      if (!list.length) replace(tools, h('p', { class: 'hint' }, 'The server offers no tools (or none you may use).'));
    } catch (e) {
      replace(tools, apiError(e));
    }
  }

  // toolCard is a tool with a form from its input schema. Run streams the call (StreamCallTool), so that
  // progress and log messages show while it runs; Cancel ends the request, which the bridge turns into an MCP
  // cancellation upstream.
  function toolCard(tool) {
    const result = h('div', { class: 'tool-result', 'aria-live': 'polite' });
    const form = new SchemaForm(tool.inputSchema || {}, { pathPrefixes: ['arguments.'] });
    const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
    const cancel = h('button', { type: 'button', class: 'cancel', hidden: true }, 'Cancel');
    let running = null;
    cancel.addEventListener('click', () => { if (running) running.abort(); });
    form.actions.append(run, cancel);
    form.element.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const args = form.values();
      if (args === null) return;
      const ctl = new AbortController();
      running = ctl;
      const leave = () => ctl.abort();
      abort.signal.addEventListener('abort', leave);
      run.disabled = true;
      cancel.hidden = false;
      const status = h('p', { class: 'hint running' }, 'Running… (what the server asks meanwhile shows under Waiting for you)');
      const bar = h('progress', { class: 'progress' });
      const logs = h('ol', { class: 'call-log' });
      replace(result, status, bar, logs);
      let final = null;
      try {
        await stream(paths.streamTool(id, tool.name), (msg) => {
          if (msg.progress) {
            const p = msg.progress;
            if (p.total) { bar.max = p.total; bar.value = p.progress || 0; } else bar.removeAttribute('value');
            status.textContent = `Running… ${p.progress || 0}${p.total ? ` of ${p.total}` : ''}${p.message ? ` — ${p.message}` : ''}`;
          }
          if (msg.log) {
            const l = msg.log;
            logs.append(h('li', {}, h('span', { class: 'kind' }, enumLabel(l.level, 'LOGGING_LEVEL_')), ' ',
              typeof l.data === 'string' ? l.data : JSON.stringify(l.data)));
          }
          if (msg.result) final = msg.result;
        }, ctl.signal, { arguments: args });
        replace(result, final ? toolResult(final) : h('p', { class: 'hint' }, 'The call ended without a result.'), logs.childElementCount ? logs : null);
      } catch (e) {
        if (abort.signal.aborted) return;
        if (e.name === 'AbortError') {
          replace(result, h('p', { class: 'hint cancelled' }, 'Cancelled: the bridge told the server to stop.'));
        } else {
          if (e instanceof APIError) form.showErrors(e.fieldViolations, e.message);
          replace(result, apiError(e));
        }
      } finally {
        abort.signal.removeEventListener('abort', leave);
        running = null;
        run.disabled = false;
        cancel.hidden = true;
      }
    });
    const ann = tool.annotations || {};
    const hints = [ann.readOnlyHint ? 'read-only' : null, ann.destructiveHint ? 'destructive' : null, ann.idempotentHint ? 'idempotent' : null].filter(Boolean);
    return h('details', { class: 'card tool', 'data-tool': tool.name },
      h('summary', {}, h('code', { class: 'tool-name' }, String(tool.name)), tool.title ? ` ${String(tool.title)}` : '',
        hints.length ? h('span', { class: 'hint' }, ` (${hints.join(', ')})`) : null),
      h('p', { class: 'description' }, String(tool.description || '')),
      form.element,
      result,
      tool.outputSchema ? h('details', {}, h('summary', {}, 'Output schema'), h('pre', {}, json(tool.outputSchema))) : null);
  }

  replace(view,
    h('p', {}, h('a', { href: '#/' }, '← Overview')),
    h('h2', {}, 'Session ', h('code', { id: 'session-id' }, id)),
    info,
    h('section', {}, h('h2', {}, 'Waiting for you'), pending.element),
    h('section', {}, h('h2', {}, 'Tools'), tools),
    h('section', {}, h('h2', {}, 'Events ', live), log));
  loadInfo();
  loadTools();
  watch();
  return { leave() { abort.abort(); } };
}

// --- routing ---

function route() {
  if (page) page.leave();
  showNotice(null);
  const m = /^#\/sessions\/([^/]+)$/.exec(location.hash);
  page = m ? sessionPage(decodeURIComponent(m[1])) : overview();
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
  window.addEventListener('hashchange', route);
  route();
  if (signInError) showNotice(signInError);
}

start();
