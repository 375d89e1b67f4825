// What servers ask of the person: pending server requests, one card each, drawn by a renderer per kind.
//
// A kind is the name of the payload field a ServerRequest carries (sampling, elicitation, roots,
// authorization, …). registerRenderer adds one: a function (request, card) that fills card.body and answers
// with card.respond(answer). A kind without a renderer gets the generic one (the request as JSON and a way
// to refuse it), so a new kind the bridge adds (an approval, say) is visible at once and gets its own
// renderer with one registerRenderer call.

import { h, u, append, replace, json, safeURL, linkCheck, registrableDomain, enumLabel } from './dom.js';
import { call, paths, APIError } from './api.js';
import { SchemaForm } from './schemaform.js';
import { apiError, block } from './content.js';

// put adds children to el as dom.js does: what is absent (null, undefined, false) adds nothing — the DOM's own
// append would show it as the text "null".
const put = (el, ...children) => append(el, children);
import { warning, findings, collidingKeys } from './untrusted.js';

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
        origin ? h('span', { class: 'meta' }, 'from ', h('code', {}, u(origin))) : null,
        req.deadline ? h('span', { class: 'meta' }, 'answer by ', new Date(req.deadline).toLocaleTimeString()) : null),
      this.body, this.status);
    this.collisions = [];
    (renderers.get(this.kind) || renderGeneric)(req, this);
    // What the renderer showed holds characters a person cannot see, or keys that look alike: say so on top,
    // with what the bridge itself found (ServerRequest.warnings), which a Python or Java host sees too.
    this.serverWarnings = Array.isArray(req.warnings) ? req.warnings : [];
    const warn = warning(this.element, this.collisions);
    const fromBridge = this.serverWarnings.length ? h('div', { class: 'u-warning bridge-warnings', role: 'alert' },
      h('strong', {}, 'The bridge flags this request: '),
      h('ul', {}, this.serverWarnings.map((w) => h('li', {}, enumLabel(w.kind, 'TEXT_WARNING_KIND_'), ' at ', h('code', {}, u(w.path || '')),
        (w.codePoints || []).length ? [' (', u(w.codePoints.join(' ')), ')'] : '', w.inKey ? ' in a key' : '', w.detail ? [' — ', u(w.detail)] : '')))) : null;
    if (fromBridge) this.body.prepend(fromBridge);
    if (warn) this.body.prepend(warn);
  }

  // risky says whether the card shows marked characters or colliding keys: deciding then takes a second,
  // explicit confirmation.
  get risky() { return findings(this.element) > 0 || this.collisions.length > 0 || this.serverWarnings.length > 0; }

  // respond sends answer (a HostAnswer) and marks the card answered; an APIError is thrown back to the
  // renderer, which shows it (field errors next to fields).
  async respond(answer, outcome = 'answered', detail = '') {
    if (this.busy || this.ended) return; // a second press while the first answer is on its way
    this.setBusy(true);
    try {
      // "-": the request id alone names the request, also one of a session still being created (an
      // authorization request raised while CreateSession runs), which its own session id does not reach yet.
      await call('POST', paths.respond('-', this.req.requestId), answer);
      // The request's end may have come first (as "answered"): say what this answer was.
      this.end(outcome, detail, true);
    } finally {
      this.setBusy(false);
    }
  }

  setBusy(busy) {
    this.busy = busy;
    if (this.ended) return;
    for (const b of this.element.querySelectorAll('button:not(.show-more):not(.show-less)')) b.disabled = busy;
  }

  // end marks the request as no longer pending.
  end(outcome, detail, mine = false) {
    if (this.ended && !(mine && !this.answered)) return;
    if (mine) this.answered = true;
    const first = !this.ended;
    this.ended = true;
    this.element.classList.add('ended');
    for (const b of this.element.querySelectorAll('button:not(.show-more):not(.show-less), input, textarea, select')) b.disabled = true;
    this.element.dataset.outcome = outcome;
    replace(this.status, h('strong', {}, `${outcome[0].toUpperCase()}${outcome.slice(1)}`), ` at ${new Date().toLocaleTimeString()}`, detail ? [' — ', u(detail)] : '');
    if (first) this.onDone(this);
  }

  // fail shows an error that is not about a field.
  fail(err) { replace(this.status, apiError(err)); }
}

function button(label, onclick, cls = '') {
  return h('button', { type: 'button', class: cls, onclick }, label);
}

function message(text) {
  return text ? h('p', { class: 'message' }, u(text)) : null;
}

// Elicitation: a form from requestedSchema, or a URL to open.
registerRenderer('elicitation', (req, card) => {
  const el = req.elicitation;
  const answer = (action, content) => ({ elicitation: { action, content } });
  const simple = (action) => async () => {
    try { await card.respond(answer(action), { ELICIT_ACTION_ACCEPT: 'accepted', ELICIT_ACTION_DECLINE: 'declined', ELICIT_ACTION_CANCEL: 'cancelled' }[action]); } catch (e) { card.fail(e); }
  };
  if (el.mode === 'ELICITATION_MODE_URL') {
    // The destination's registrable domain first (what a person must judge), then its full host and the URL
    // as sent; a link only to an absolute https URL (http to loopback), never resolved against this page.
    const check = linkCheck(el.url);
    const domain = check.url ? registrableDomain(check.url.hostname) : '';
    put(card.body, 
      message(el.message),
      check.url
        ? h('p', { class: 'destination' }, 'The server asks you to open a page of ', h('strong', { class: 'domain' }, u(domain)),
          check.url.hostname !== domain ? [' (host ', h('code', { class: 'host' }, u(check.url.host)), ')'] : '', ':')
        : h('p', { class: 'refused', role: 'alert' }, 'The server asks you to open an address the console will not link to: ', check.reason, '.'),
      h('p', {}, h('code', { class: 'url' }, u(el.url || ''))),
      h('div', { class: 'actions' },
        check.url ? h('a', { class: 'button', href: check.url.href, target: '_blank', rel: 'noopener noreferrer' }, 'Open link') : null,
        button('Done: accept', simple('ELICIT_ACTION_ACCEPT'), 'primary'),
        button('Decline', simple('ELICIT_ACTION_DECLINE')),
        button('Cancel', simple('ELICIT_ACTION_CANCEL'))));
    return;
  }
  const form = new SchemaForm(el.requestedSchema, { pathPrefixes: ['content.'] });
  put(form.actions, 
    h('button', { type: 'submit', class: 'primary' }, 'Accept'),
    button('Decline', simple('ELICIT_ACTION_DECLINE')),
    button('Cancel', simple('ELICIT_ACTION_CANCEL')));
  form.element.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const content = form.values();
    if (content === null) return;
    try {
      await card.respond(answer('ELICIT_ACTION_ACCEPT', content), 'accepted');
    } catch (e) {
      if (e instanceof APIError) form.showErrors(e.fieldViolations, e.fieldViolations.length ? 'The bridge refused the answer:' : e.message);
      else card.fail(e);
    }
  });
  put(card.body, message(el.message), form.element);
});

// Sampling: the conversation, and a text answer or a refusal.
registerRenderer('sampling', (req, card) => {
  const s = req.sampling;
  const text = h('textarea', { rows: 4, class: 'answer', 'aria-label': 'Answer', placeholder: 'Write the answer the model would give' });
  const model = h('input', { type: 'text', value: 'console-user', 'aria-label': 'Model name' });
  put(card.body, 
    s.systemPrompt ? h('div', {}, h('h4', {}, 'System prompt'), h('pre', {}, u(s.systemPrompt))) : null,
    h('ol', { class: 'conversation' }, (s.messages || []).map((m) => h('li', {},
      h('span', { class: 'role' }, enumLabel(m.role, 'ROLE_')), (m.content || []).map(block)))),
    h('p', { class: 'hint' }, `At most ${s.maxTokens || '?'} tokens.`),
    h('label', {}, 'Answer', text),
    h('label', {}, 'Model', model),
    h('div', { class: 'actions' },
      button('Send answer', async () => {
        try {
          await card.respond({ sampling: { role: 'ROLE_ASSISTANT', model: model.value || 'console-user', stopReason: 'endTurn', content: [{ text: { text: text.value } }] } }, 'answered');
        } catch (e) { card.fail(e); }
      }, 'primary'),
      button('Decline', async () => {
        try { await card.respond({ error: { code: -1, message: 'User rejected sampling request' } }, 'declined'); } catch (e) { card.fail(e); }
      })));
});

// Authorization: open the identity provider's page, paste where the browser landed.
registerRenderer('authorization', (req, card) => {
  const a = req.authorization;
  const landed = h('input', { type: 'url', class: 'wide', 'aria-label': 'Redirect URL', placeholder: String(a.redirectUrl || '') + '?code=…&state=…' });
  const form = h('form', { novalidate: true },
    h('p', {}, 'Server ', h('strong', {}, u(a.serverName || '')), ' needs you to sign in',
      (a.scopes || []).length ? [' (scopes ', h('code', {}, u(a.scopes.join(' '))), ')'] : '', '.'),
    h('p', {}, h('a', { class: 'button', href: safeURL(a.authorizationUrl), target: '_blank', rel: 'noopener noreferrer' }, 'Open sign-in page'),
      ' ', h('code', { class: 'url' }, u(a.authorizationUrl || ''))),
    h('label', {}, 'Then paste the address the browser landed on (it starts with ', h('code', {}, u(a.redirectUrl || '')), ')', landed),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Send'),
      button('Give up', async () => {
        try { await card.respond({ error: { code: -1, message: 'the user gave up authorization' } }); } catch (e) { card.fail(e); }
      })));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try { await card.respond({ authorization: { redirectUrl: landed.value.trim() } }, 'sent'); } catch (e) { card.fail(e); }
  });
  put(card.body, form);
});

// Approval: a tool call waits for a person other than the caller (docs/adr/0080-approvals.md). Shown: who
// calls which tool on which server, the arguments exactly as they will be sent (the canonical JSON, pretty
// printed), their SHA-256 and the rule; answered with approve or deny and a reason. An approval repeats the
// digest shown, so that what is approved is what this page showed.
registerRenderer('approval', (req, card) => {
  const a = req.approval;
  const reason = h('input', { type: 'text', class: 'wide reason', 'aria-label': 'Reason', placeholder: 'Why (the caller sees it on a denial; it is audited)' });
  let args = String(a.canonicalArguments || '{}');
  try {
    const parsed = JSON.parse(args);
    card.collisions = collidingKeys(parsed);
    args = json(parsed);
  } catch { /* shown as it will be sent */ }
  // Approving what holds hidden characters or look-alike keys takes a second, explicit press.
  const confirm = h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Approve anyway?', hidden: true });
  const decide = (approve, confirmed = false) => async () => {
    if (approve && !confirmed && card.risky) {
      replace(confirm,
        h('p', {}, h('strong', {}, 'Approve anyway? '), 'The arguments hold characters you cannot see or keys that look alike (marked above). ',
          'The server gets exactly what is marked, not what it seems to say.'),
        h('div', { class: 'actions' },
          button('Approve anyway', decide(true, true), 'primary approve-confirm'),
          button('Back', () => { confirm.hidden = true; approveButton.focus(); })));
      confirm.hidden = false;
      confirm.querySelector('.approve-confirm').focus();
      return;
    }
    const decision = { approve, reason: reason.value.trim() };
    if (approve) decision.argumentsSha256 = a.argumentsSha256;
    try {
      await card.respond({ approval: decision }, approve ? 'approved' : 'denied', decision.reason);
    } catch (e) { card.fail(e); }
  };
  const approveButton = button('Approve', decide(true), 'primary approve');
  put(card.body, 
    h('p', { class: 'call' }, h('strong', { class: 'caller' }, u(a.caller || '')), ' calls ',
      h('code', { class: 'tool' }, u(a.tool || '')), ' on ', h('strong', { class: 'server' }, u(a.serverName || '')),
      req.originCallId ? [' (call ', h('code', {}, u(req.originCallId)), ')'] : ''),
    h('h4', {}, 'Arguments'),
    h('pre', { class: 'arguments' }, args),
    h('p', { class: 'hint' }, 'SHA-256 of the arguments as sent: ', h('code', { class: 'digest' }, String(a.argumentsSha256 || '')),
      a.rule ? [' · matched ', h('code', { class: 'rule' }, u(a.rule))] : ''),
    h('label', {}, 'Reason', reason),
    h('div', { class: 'actions' }, approveButton, button('Deny', decide(false), 'danger deny')),
    confirm);
});

// Any other kind (roots: the console declares no roots capability, so the bridge answers those itself): the
// request as JSON, and a refusal.
function renderGeneric(req, card) {
  const payload = Object.create(null);
  for (const [k, v] of Object.entries(req)) if (!envelope.has(k)) payload[k] = v;
  card.collisions = collidingKeys(payload);
  put(card.body, 
    h('p', { class: 'hint' }, `The console cannot answer a ${card.kind} request except by refusing it.`),
    h('pre', {}, json(payload)),
    h('div', { class: 'actions' }, button('Refuse', async () => {
      try { await card.respond({ error: { code: -32603, message: 'refused by the operator' } }, 'refused'); } catch (e) { card.fail(e); }
    })));
}

// PendingList shows a changing set of pending requests, keyed by request id, so that a card being filled
// in is never redrawn. A decided card stays, ended, with its outcome (the newest KEEP_ENDED of them), so that
// what was decided remains visible; onAdd hears of every new card (to announce it).
const KEEP_ENDED = 20;

export class PendingList {
  constructor(emptyText, { onAdd, onChange } = {}) {
    this.cards = new Map();
    this.onAdd = onAdd || (() => {});
    this.onChange = onChange || (() => {});
    this.empty = h('p', { class: 'hint empty' }, emptyText);
    this.element = h('div', { class: 'pending-list' }, this.empty);
  }

  // waiting is the number of cards not yet ended.
  get waiting() {
    let n = 0;
    for (const c of this.cards.values()) if (!c.ended) n++;
    return n;
  }

  add(req) {
    if (!req || !req.requestId || this.cards.has(req.requestId)) return;
    const card = new Card(req, { onDone: () => this.trim() });
    this.cards.set(req.requestId, card);
    // Waiting cards above decided ones.
    const firstEnded = [...this.element.children].find((c) => c.classList.contains('ended'));
    this.element.insertBefore(card.element, firstEnded || null);
    this.empty.hidden = true;
    this.onAdd(card);
    this.onChange();
  }

  // trim drops the oldest decided cards beyond KEEP_ENDED, moving the others below the waiting ones.
  trim() {
    const ended = [...this.cards.values()].filter((c) => c.ended);
    for (const c of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) this.remove(c.req.requestId);
    for (const c of ended.slice(-KEEP_ENDED)) {
      if (c.element.isConnected && c.element.contains(document.activeElement)) continue; // keep the person's focus
      this.element.append(c.element);
    }
    this.onChange();
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
    this.onChange();
  }

  // sync makes the list hold exactly reqs (a fresh ListPendingRequests): new ones are added, gone ones end.
  sync(reqs) {
    const ids = new Set(reqs.map((r) => r.requestId));
    for (const r of reqs) this.add(r);
    for (const [id, card] of this.cards) if (!ids.has(id) && !card.ended) card.end('no longer pending');
  }
}
