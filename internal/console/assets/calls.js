// Tool calls started in the console, kept by the page rather than by the view that started them: a call goes
// on when the person moves to another page of the console (the hash routes do not unload the page), and the
// session page finds it again by session and tool when the person comes back. Every call has an id the
// console mints (call_id), and a short history of each session's calls lives in sessionStorage (this tab,
// bounded), with the arguments of the calls still running: after a reload, on whichever page it lands, each
// call the history says was running is asked for again with resume: true and its arguments
// (docs/adr/0022-resumable-calls.md). A call that waited for approval was never sent, so it goes on and asks
// for approval again; one that completed returns its one outcome; one cut off upstream says that its outcome
// is unknown (docs/adr/0096-console-reload-and-narrow-screens.md). Every call is started detached
// (docs/adr/0105-detached-calls.md): a reload or a closed tab does not cancel it on the server, its questions
// stay pending, and the resumed call joins it; only Cancel (CancelCall) cancels it.

import { call, stream, paths, APIError } from './api.js';

const HISTORY_KEY = (sid) => `${PREFIX}${sid}`;
const KEEP = 30; // calls kept in a session's history
const KEEP_LOGS = 200; // log lines kept per call
const KEEP_ARGS_CHARS = 256 * 1024; // a running call's arguments kept for a reload, as JSON, at most
const PREFIX = 'mcp-bridge-console.calls.';

// all is every call of this page's life, by call id.
const all = new Map();
// watchers hear every change of every call (a page's call history).
const watchers = new Set();

// watchAll calls fn with each call that changes; it returns the function that stops it.
export function watchAll(fn) { watchers.add(fn); return () => watchers.delete(fn); }

// Call is one tool call: its state ('running', 'done', 'failed', 'cancelled'), progress, logs, result or error,
// and the approval it waits for (approval: the ServerRequest on session "approvals", when the person may
// see it, or the call's own approval-pending event). Listeners hear every change.
export class Call {
  constructor(sessionId, tool, args, callId) {
    this.sessionId = sessionId;
    this.tool = tool;
    this.args = args;
    this.callId = callId || `console-${crypto.randomUUID()}`;
    // Whether the arguments are small enough to keep in the tab for a reload (entryOf).
    this.argsKept = !!args && JSON.stringify(args).length <= KEEP_ARGS_CHARS;
    this.state = 'running';
    this.startTime = new Date().toISOString();
    this.progress = null;
    this.logs = [];
    this.result = null;
    this.error = null;
    this.approval = null;
    this.pendingEvent = null;
    this.abort = new AbortController();
    this.listeners = new Set();
    all.set(this.callId, this);
  }

  on(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }

  changed() {
    for (const fn of this.listeners) fn(this);
    saveHistory(this.sessionId);
    for (const fn of watchers) fn(this);
  }

  // run streams the call (StreamCallTool) until it ends; resume asks for the one outcome of a call of this
  // id started before.
  async run(resume = false) {
    // A resumed call carries its arguments: a call cut off before it was sent (one waiting for approval) is
    // sent now, with what the person gave.
    const body = resume ? { arguments: this.args, callId: this.callId, detach: true, resume: true } : { arguments: this.args, callId: this.callId, detach: true };
    try {
      await stream(paths.streamTool(this.sessionId, this.tool), (msg) => {
        if (msg.progress) this.progress = msg.progress;
        if (msg.log) {
          this.logs.push(msg.log);
          if (this.logs.length > KEEP_LOGS) this.logs.shift();
        }
        if (msg.approvalPending) this.pendingEvent = msg.approvalPending;
        if (msg.result) this.result = msg.result;
        this.changed();
      }, this.abort.signal, body);
      this.state = 'done';
    } catch (e) {
      if (e.name === 'AbortError' || this.cancelling) this.state = 'cancelled';
      else { this.state = 'failed'; this.error = e instanceof APIError ? e : new APIError(0, { message: String(e.message || e) }); }
    }
    this.approval = null;
    this.pendingEvent = null;
    this.changed();
  }

  // cancel cancels the call on the server (CancelCall: it outlives the page's stream, ADR 0105), then ends
  // the stream.
  cancel() {
    this.cancelling = true;
    call('POST', paths.cancelCall(this.sessionId, this.callId), {}).catch(() => {}).finally(() => this.abort.abort());
  }

  // summary is one line for the history.
  get summary() {
    if (this.state === 'running') return this.approval || this.pendingEvent ? 'waiting for approval' : 'running';
    if (this.state === 'failed') return `failed: ${[this.error.reason, this.error.message].filter(Boolean).join(': ')}`;
    if (this.state === 'done' && this.result && this.result.isError) return 'done, the tool reported an error';
    return this.state;
  }
}

// start begins a new call.
export function start(sessionId, tool, args) {
  const c = new Call(sessionId, tool, args);
  saveHistory(sessionId); // remembered at once: a reload before its first event still finds it
  c.run(false);
  return c;
}

// latest returns the newest call of tool in session kept in memory, or null.
export function latest(sessionId, tool) {
  let found = null;
  for (const c of all.values()) if (c.sessionId === sessionId && c.tool === tool) found = c;
  return found;
}

// byCallId returns the call of that id, or undefined.
export function byCallId(id) { return all.get(id); }

// running returns the calls still running.
export function running() { return [...all.values()].filter((c) => c.state === 'running'); }

// history returns a session's kept calls, newest first: those of this page's life and those the tab's
// sessionStorage remembers from before a reload.
export function history(sessionId) {
  const mem = [...all.values()].filter((c) => c.sessionId === sessionId);
  const ids = new Set(mem.map((c) => c.callId));
  const stored = loadHistory(sessionId).filter((e) => !ids.has(e.callId));
  return [...stored, ...mem.map(entryOf)].sort((a, b) => (a.startTime < b.startTime ? 1 : -1)).slice(0, KEEP);
}

// resumeLost asks again for the calls of a session the stored history says were running when the page was
// left (a reload): each goes on, or gets its one outcome, or CALL_OUTCOME_UNKNOWN. A call whose arguments
// were too large to keep is not sent blind: its entry says so.
export function resumeLost(sessionId) {
  let lost = false;
  const entries = loadHistory(sessionId);
  for (const e of entries) {
    if (e.state !== 'running' || all.has(e.callId)) continue;
    if (!e.args || typeof e.args !== 'object') {
      e.state = 'failed';
      e.summary = 'lost in a reload: its arguments were too large to keep in the tab';
      lost = true;
      continue;
    }
    const c = new Call(sessionId, e.tool, e.args, e.callId);
    c.startTime = e.startTime;
    c.resumed = true; // taken up again after a reload: its card says so if its outcome is lost
    c.run(true);
  }
  if (lost) store(sessionId, entries);
}

// resumeAll is resumeLost for every session this tab's history knows: a reload on any page takes the
// person's calls up again.
export function resumeAll() {
  const ids = [];
  try {
    for (let i = 0; i < sessionStorage.length; i++) {
      const key = sessionStorage.key(i);
      if (key && key.startsWith(PREFIX)) ids.push(key.slice(PREFIX.length));
    }
  } catch { return; /* storage off: nothing kept */ }
  for (const id of ids) resumeLost(id);
}

function entryOf(c) {
  const e = { callId: c.callId, tool: c.tool, startTime: c.startTime, state: c.state, summary: c.summary };
  // Only a running call's arguments are kept (to resume it), and only up to a bound.
  if (c.state === 'running' && c.argsKept) e.args = c.args;
  return e;
}

function loadHistory(sessionId) {
  try {
    const v = JSON.parse(sessionStorage.getItem(HISTORY_KEY(sessionId)) || '[]');
    return Array.isArray(v) ? v.filter((e) => e && typeof e.callId === 'string') : [];
  } catch {
    return [];
  }
}

function saveHistory(sessionId) { store(sessionId, history(sessionId)); }

function store(sessionId, entries) {
  try {
    sessionStorage.setItem(HISTORY_KEY(sessionId), JSON.stringify(entries));
  } catch { /* storage full or off: the history is a convenience */ }
}
