// What servers ask of the person: pending server requests, one card each, drawn by a renderer per kind.
//
// A kind is the name of the payload field a ServerRequest carries (sampling, elicitation, roots,
// authorization, …). registerRenderer adds one: a function (request, card) that fills card.body and answers
// with card.respond(answer). A kind without a renderer gets the generic one (the request as JSON and a way
// to refuse it), so a new kind the bridge adds (an approval, say) is visible at once and gets its own
// renderer with one registerRenderer call.

import { h, replace, json, safeURL, enumLabel } from './dom.js';
import { call, paths, APIError } from './api.js';
import { SchemaForm } from './schemaform.js';
import { apiError, block } from './content.js';

const renderers = new Map();

export function registerRenderer(kind, render) { renderers.set(kind, render); }

// Fields of a ServerRequest that are not its payload.
const envelope = new Set(['requestId', 'sessionId', 'originCallId', 'originMethod', 'originName', 'delivery', 'inputKey',
  'deadline', 'createTime', 'taskId', 'traceContext']);

// kindOf returns the payload field of a request.
export function kindOf(req) {
  for (const k of renderers.keys()) if (req[k]) return k;
  return Object.keys(req).find((k) => !envelope.has(k)) || 'unknown';
}

// Card is one pending request on the page.
export class Card {
  constructor(req, { onDone } = {}) {
    this.req = req;
    this.kind = kindOf(req);
    this.onDone = onDone || (() => {});
    this.body = h('div', { class: 'card-body' });
    this.status = h('div', { class: 'card-status', role: 'status' });
    const origin = [req.originMethod, req.originName].filter(Boolean).join(' ');
    this.element = h('section', { class: `card pending kind-${this.kind}`, 'data-request-id': req.requestId, 'data-kind': this.kind },
      h('header', {},
        h('span', { class: 'kind' }, this.kind),
        h('code', { class: 'rid' }, String(req.requestId || '')),
        // An authorization request may come while its session is still being created: no page to link to yet.
        // An approval request belongs to the caller's session, which is not the approver's to open.
        req.sessionId && this.kind !== 'authorization' && this.kind !== 'approval' ? h('span', { class: 'meta' }, 'session ', h('a', { href: `#/sessions/${encodeURIComponent(req.sessionId)}` }, String(req.sessionId))) : null,
        origin ? h('span', { class: 'meta' }, 'from ', h('code', {}, origin)) : null,
        req.deadline ? h('span', { class: 'meta' }, 'answer by ', new Date(req.deadline).toLocaleTimeString()) : null),
      this.body, this.status);
    (renderers.get(this.kind) || renderGeneric)(req, this);
  }

  // respond sends answer (a HostAnswer) and marks the card answered; an APIError is thrown back to the
  // renderer, which shows it (field errors next to fields).
  async respond(answer) {
    this.setBusy(true);
    try {
      // "-": the request id alone names the request, also one of a session still being created (an
      // authorization request raised while CreateSession runs), which its own session id does not reach yet.
      await call('POST', paths.respond('-', this.req.requestId), answer);
      this.end('answered');
    } finally {
      this.setBusy(false);
    }
  }

  setBusy(busy) {
    for (const b of this.element.querySelectorAll('button')) b.disabled = busy;
  }

  // end marks the request as no longer pending.
  end(outcome, detail) {
    if (this.ended) return;
    this.ended = true;
    this.element.classList.add('ended');
    for (const b of this.element.querySelectorAll('button, input, textarea, select')) b.disabled = true;
    replace(this.status, `Ended: ${outcome}`, detail ? ` — ${detail}` : '');
    this.onDone(this);
  }

  // fail shows an error that is not about a field.
  fail(err) { replace(this.status, apiError(err)); }
}

function button(label, onclick, cls = '') {
  return h('button', { type: 'button', class: cls, onclick }, label);
}

function message(text) {
  return text ? h('p', { class: 'message' }, String(text)) : null;
}

// Elicitation: a form from requestedSchema, or a URL to open.
registerRenderer('elicitation', (req, card) => {
  const el = req.elicitation;
  const answer = (action, content) => ({ elicitation: { action, content } });
  const simple = (action) => async () => {
    try { await card.respond(answer(action)); } catch (e) { card.fail(e); }
  };
  if (el.mode === 'ELICITATION_MODE_URL') {
    const url = safeURL(el.url);
    let host = '';
    try { host = new URL(url).host; } catch { /* "#" */ }
    card.body.append(
      message(el.message),
      h('p', {}, 'The server asks you to open ', h('strong', { class: 'host' }, host || '(an invalid URL)'), ':'),
      h('p', {}, h('code', { class: 'url' }, String(el.url || ''))),
      h('div', { class: 'actions' },
        h('a', { class: 'button', href: url, target: '_blank', rel: 'noopener noreferrer' }, 'Open link'),
        button('Done: accept', simple('ELICIT_ACTION_ACCEPT'), 'primary'),
        button('Decline', simple('ELICIT_ACTION_DECLINE')),
        button('Cancel', simple('ELICIT_ACTION_CANCEL'))));
    return;
  }
  const form = new SchemaForm(el.requestedSchema, { pathPrefixes: ['content.'] });
  form.actions.append(
    h('button', { type: 'submit', class: 'primary' }, 'Accept'),
    button('Decline', simple('ELICIT_ACTION_DECLINE')),
    button('Cancel', simple('ELICIT_ACTION_CANCEL')));
  form.element.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const content = form.values();
    if (content === null) return;
    try {
      await card.respond(answer('ELICIT_ACTION_ACCEPT', content));
    } catch (e) {
      if (e instanceof APIError) form.showErrors(e.fieldViolations, e.fieldViolations.length ? 'The bridge refused the answer:' : e.message);
      else card.fail(e);
    }
  });
  card.body.append(message(el.message), form.element);
});

// Sampling: the conversation, and a text answer or a refusal.
registerRenderer('sampling', (req, card) => {
  const s = req.sampling;
  const text = h('textarea', { rows: 4, class: 'answer', 'aria-label': 'Answer', placeholder: 'Write the answer the model would give' });
  const model = h('input', { type: 'text', value: 'console-user', 'aria-label': 'Model name' });
  card.body.append(
    s.systemPrompt ? h('div', {}, h('h4', {}, 'System prompt'), h('pre', {}, String(s.systemPrompt))) : null,
    h('ol', { class: 'conversation' }, (s.messages || []).map((m) => h('li', {},
      h('span', { class: 'role' }, enumLabel(m.role, 'ROLE_')), (m.content || []).map(block)))),
    h('p', { class: 'hint' }, `At most ${s.maxTokens || '?'} tokens.`),
    h('label', {}, 'Answer', text),
    h('label', {}, 'Model', model),
    h('div', { class: 'actions' },
      button('Send answer', async () => {
        try {
          await card.respond({ sampling: { role: 'ROLE_ASSISTANT', model: model.value || 'console-user', stopReason: 'endTurn', content: [{ text: { text: text.value } }] } });
        } catch (e) { card.fail(e); }
      }, 'primary'),
      button('Decline', async () => {
        try { await card.respond({ error: { code: -1, message: 'User rejected sampling request' } }); } catch (e) { card.fail(e); }
      })));
});

// Authorization: open the identity provider's page, paste where the browser landed.
registerRenderer('authorization', (req, card) => {
  const a = req.authorization;
  const landed = h('input', { type: 'url', class: 'wide', 'aria-label': 'Redirect URL', placeholder: String(a.redirectUrl || '') + '?code=…&state=…' });
  const form = h('form', { novalidate: true },
    h('p', {}, 'Server ', h('strong', {}, String(a.serverName || '')), ' needs you to sign in',
      (a.scopes || []).length ? [' (scopes ', h('code', {}, a.scopes.join(' ')), ')'] : '', '.'),
    h('p', {}, h('a', { class: 'button', href: safeURL(a.authorizationUrl), target: '_blank', rel: 'noopener noreferrer' }, 'Open sign-in page'),
      ' ', h('code', { class: 'url' }, String(a.authorizationUrl || ''))),
    h('label', {}, 'Then paste the address the browser landed on (it starts with ', h('code', {}, String(a.redirectUrl || '')), ')', landed),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Send'),
      button('Give up', async () => {
        try { await card.respond({ error: { code: -1, message: 'the user gave up authorization' } }); } catch (e) { card.fail(e); }
      })));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try { await card.respond({ authorization: { redirectUrl: landed.value.trim() } }); } catch (e) { card.fail(e); }
  });
  card.body.append(form);
});

// Approval: a tool call waits for a person other than the caller (docs/adr/0080-approvals.md). Shown: who
// calls which tool on which server, the arguments exactly as they will be sent (the canonical JSON, pretty
// printed), their SHA-256 and the rule; answered with approve or deny and a reason. An approval repeats the
// digest shown, so that what is approved is what this page showed.
registerRenderer('approval', (req, card) => {
  const a = req.approval;
  const reason = h('input', { type: 'text', class: 'wide reason', 'aria-label': 'Reason', placeholder: 'Why (the caller sees it on a denial; it is audited)' });
  let args = String(a.canonicalArguments || '{}');
  try { args = json(JSON.parse(args)); } catch { /* shown as it will be sent */ }
  const decide = (approve) => async () => {
    const decision = { approve, reason: reason.value.trim() };
    if (approve) decision.argumentsSha256 = a.argumentsSha256;
    try { await card.respond({ approval: decision }); } catch (e) { card.fail(e); }
  };
  card.body.append(
    h('p', { class: 'call' }, h('strong', { class: 'caller' }, String(a.caller || '')), ' calls ',
      h('code', { class: 'tool' }, String(a.tool || '')), ' on ', h('strong', { class: 'server' }, String(a.serverName || '')),
      req.originCallId ? [' (call ', h('code', {}, String(req.originCallId)), ')'] : ''),
    h('h4', {}, 'Arguments'),
    h('pre', { class: 'arguments' }, args),
    h('p', { class: 'hint' }, 'SHA-256 of the arguments as sent: ', h('code', { class: 'digest' }, String(a.argumentsSha256 || '')),
      a.rule ? [' · matched ', h('code', { class: 'rule' }, String(a.rule))] : ''),
    h('label', {}, 'Reason', reason),
    h('div', { class: 'actions' }, button('Approve', decide(true), 'primary approve'), button('Deny', decide(false), 'danger deny')));
});

// Any other kind (roots: the console declares no roots capability, so the bridge answers those itself): the
// request as JSON, and a refusal.
function renderGeneric(req, card) {
  const payload = {};
  for (const [k, v] of Object.entries(req)) if (!envelope.has(k)) payload[k] = v;
  card.body.append(
    h('p', { class: 'hint' }, `The console cannot answer a ${card.kind} request except by refusing it.`),
    h('pre', {}, json(payload)),
    h('div', { class: 'actions' }, button('Refuse', async () => {
      try { await card.respond({ error: { code: -32603, message: 'refused by the operator' } }); } catch (e) { card.fail(e); }
    })));
}

// PendingList shows a changing set of pending requests, keyed by request id, so that a card being filled
// in is never redrawn.
export class PendingList {
  constructor(emptyText) {
    this.cards = new Map();
    this.empty = h('p', { class: 'hint empty' }, emptyText);
    this.element = h('div', { class: 'pending-list' }, this.empty);
  }

  add(req) {
    if (!req || !req.requestId || this.cards.has(req.requestId)) return;
    const card = new Card(req, { onDone: (c) => setTimeout(() => this.remove(c.req.requestId), 4000) });
    this.cards.set(req.requestId, card);
    this.element.append(card.element);
    this.empty.hidden = true;
  }

  // ended marks a request as ended (a requestEnded event).
  ended(requestId, outcome, detail) {
    const card = this.cards.get(requestId);
    if (card) card.end(enumLabel(outcome, 'REQUEST_OUTCOME_'), detail);
  }

  remove(requestId) {
    const card = this.cards.get(requestId);
    if (!card) return;
    card.element.remove();
    this.cards.delete(requestId);
    this.empty.hidden = this.cards.size > 0;
  }

  // sync makes the list hold exactly reqs (a fresh ListPendingRequests): new ones are added, gone ones end.
  sync(reqs) {
    const ids = new Set(reqs.map((r) => r.requestId));
    for (const r of reqs) this.add(r);
    for (const [id, card] of this.cards) if (!ids.has(id) && !card.ended) card.end('no longer pending');
  }
}
