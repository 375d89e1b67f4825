// The rest of MCP on a session page, as MCP Inspector offers it: resources (list, templates, read,
// subscribe — updates arrive as events), prompts (with their arguments, and completion of each argument as it
// is typed), the server's log level, ping, and the raw request and answer of every action with a Copy button.
// Everything goes through the REST API as the signed-in principal.

import { h, u, replace, json } from './dom.js';
import { call, listAll } from './api.js';
import { apiError, block } from './content.js';

const seg = encodeURIComponent;
const base = (id) => `/v1/sessions/${seg(id)}`;

// raw is the request and the answer of one action, collapsed, with Copy.
function raw(method, path, body, answer) {
  const text = `${method} ${path}\n${body === undefined ? '' : `${json(body)}\n`}\n${json(answer)}`;
  const copy = h('button', { type: 'button', class: 'copy' }, 'Copy');
  copy.addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(text); copy.textContent = 'Copied'; } catch { copy.textContent = 'Copy failed (the browser refused)'; }
  });
  return h('details', { class: 'raw' }, h('summary', {}, 'Raw request and answer'), h('pre', {}, text), copy);
}

// act runs one request into out: the answer drawn by draw, then its raw view; an error in words.
async function act(out, method, path, body, draw) {
  replace(out, h('p', { class: 'hint' }, 'Working…'));
  try {
    const answer = await call(method, path, body);
    replace(out, draw(answer), raw(method, path, body, answer));
    return answer;
  } catch (e) {
    replace(out, apiError(e), raw(method, path, body, { error: { httpStatus: e.httpStatus, code: e.code, reason: e.reason, message: e.message } }));
    return null;
  }
}

function contents(answer) {
  return h('div', { class: 'contents' }, (answer.contents || []).map((c) => h('div', { class: 'resource-content' },
    h('p', {}, h('code', {}, u(c.uri || '')), c.mimeType ? [' (', u(c.mimeType), ')'] : ''),
    c.text !== undefined ? h('pre', { class: 'text' }, c.text) : h('p', { class: 'hint' }, `binary, ${String(c.blob || '').length} base64 characters`))));
}

// resources is the Resources panel.
function resources(id) {
  const list = h('ul', { class: 'resources' });
  const templates = h('ul', { class: 'templates' });
  const out = h('div', { class: 'mcp-out', 'aria-live': 'polite' });
  const subscribed = new Set();
  const read = (uri) => act(out, 'POST', `${base(id)}/resources:read`, { uri }, contents);
  const load = async () => {
    try {
      const [rs, ts] = await Promise.all([listAll(`${base(id)}/resources`, 'resources'), listAll(`${base(id)}/resourceTemplates`, 'resourceTemplates')]);
      replace(list, rs.map((r) => {
        const sub = h('button', { type: 'button', class: 'subscribe' }, subscribed.has(r.uri) ? 'Unsubscribe' : 'Subscribe');
        sub.addEventListener('click', async () => {
          const on = !subscribed.has(r.uri);
          const ok = await act(out, 'POST', `${base(id)}/resources:${on ? 'subscribe' : 'unsubscribe'}`, { uri: r.uri },
            () => h('p', {}, on ? 'Subscribed: updates show under Events.' : 'Unsubscribed.'));
          if (ok) { if (on) subscribed.add(r.uri); else subscribed.delete(r.uri); sub.textContent = on ? 'Unsubscribe' : 'Subscribe'; }
        });
        return h('li', { 'data-uri': r.uri }, h('code', {}, u(r.uri)), ' ', u(r.title || r.name || ''), ' ',
          h('button', { type: 'button', class: 'read', onclick: () => read(r.uri) }, 'Read'), ' ', sub);
      }));
      if (!rs.length) replace(list, h('li', { class: 'hint' }, 'No resources.'));
      replace(templates, ts.map((t) => {
        const input = h('input', { type: 'text', class: 'uri', 'aria-label': `URI of ${t.uriTemplate}`, value: t.uriTemplate });
        return h('li', { 'data-template': t.uriTemplate }, h('code', {}, u(t.uriTemplate)), ' ', u(t.title || t.name || ''),
          h('div', { class: 'row' }, input, h('button', { type: 'button', class: 'read', onclick: () => read(input.value) }, 'Read')));
      }));
      if (!ts.length) replace(templates, h('li', { class: 'hint' }, 'No resource templates.'));
    } catch (e) {
      replace(list, h('li', {}, apiError(e)));
    }
  };
  return h('details', { class: 'card mcp resources-panel', ontoggle: (ev) => { if (ev.currentTarget.open && !list.childElementCount) load(); } },
    h('summary', {}, 'Resources'), h('h4', {}, 'Resources'), list, h('h4', {}, 'Templates'), templates, out);
}

// prompts is the Prompts panel: a form per prompt; each argument completes as it is typed (a <datalist> of
// the server's completion/complete values).
function prompts(id) {
  const list = h('div', { class: 'prompts' });
  let n = 0;
  const load = async () => {
    try {
      const ps = await listAll(`${base(id)}/prompts`, 'prompts');
      replace(list, ps.map((p) => {
        const out = h('div', { class: 'mcp-out', 'aria-live': 'polite' });
        const inputs = new Map();
        const fields = (p.arguments || []).map((a) => {
          const fid = `prompt-${++n}`;
          const options = h('datalist', { id: `${fid}-list` });
          const input = h('input', { type: 'text', id: fid, 'data-arg': a.name, list: `${fid}-list`, autocomplete: 'off' });
          let seq = 0;
          input.addEventListener('input', async () => {
            const mine = ++seq;
            try {
              const c = await call('POST', `${base(id)}:complete`, { promptName: p.name, argumentName: a.name, argumentValue: input.value });
              if (mine === seq) replace(options, (c.values || []).map((v) => h('option', { value: v })));
            } catch { /* completion is a help; the server may not offer it */ }
          });
          inputs.set(a.name, input);
          return h('div', { class: 'field' }, h('label', { for: fid }, u(a.title || a.name), a.required ? h('span', { class: 'req' }, ' *') : null),
            a.description ? h('p', { class: 'hint' }, u(a.description)) : null, input, options);
        });
        const form = h('form', { class: 'prompt', 'data-prompt': p.name, novalidate: true },
          h('h4', {}, h('code', {}, u(p.name)), p.title ? [' ', u(p.title)] : ''), p.description ? h('p', { class: 'hint' }, u(p.description)) : null,
          fields, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Get')), out);
        form.addEventListener('submit', (ev) => {
          ev.preventDefault();
          const args = Object.create(null);
          for (const [k, input] of inputs) if (input.value !== '') args[k] = input.value;
          act(out, 'POST', `${base(id)}/prompts/${seg(p.name)}:get`, { arguments: args }, (r) => h('div', {},
            r.description ? h('p', {}, u(r.description)) : null,
            h('ol', { class: 'conversation' }, (r.messages || []).map((m) => h('li', {}, h('span', { class: 'role' }, String(m.role || '').replace('ROLE_', '').toLowerCase()),
              (Array.isArray(m.content) ? m.content : [m.content]).filter(Boolean).map(block))))));
        });
        return form;
      }));
      if (!ps.length) replace(list, h('p', { class: 'hint' }, 'No prompts.'));
    } catch (e) {
      replace(list, apiError(e));
    }
  };
  return h('details', { class: 'card mcp prompts-panel', ontoggle: (ev) => { if (ev.currentTarget.open && !list.childElementCount) load(); } },
    h('summary', {}, 'Prompts'), list);
}

const levels = ['DEBUG', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'CRITICAL', 'ALERT', 'EMERGENCY'];

// utilities is the log level and ping.
function utilities(id) {
  const out = h('div', { class: 'mcp-out', 'aria-live': 'polite' });
  const level = h('select', { id: 'log-level', 'aria-label': 'Log level' }, levels.map((l) => h('option', { value: `LOGGING_LEVEL_${l}` }, l.toLowerCase())));
  return h('details', { class: 'card mcp utilities-panel' }, h('summary', {}, 'Log level and ping'),
    h('div', { class: 'row' },
      h('label', { for: 'log-level' }, 'Server log level '), level,
      h('button', { type: 'button', class: 'set-level', onclick: () => act(out, 'POST', `${base(id)}:setLogLevel`, { level: level.value }, () => h('p', {}, `The server now logs from ${level.selectedOptions[0].textContent} up; its messages show under Events.`)) }, 'Set'),
      h('button', { type: 'button', class: 'ping', onclick: () => { const t0 = performance.now(); act(out, 'POST', `${base(id)}:ping`, {}, () => h('p', {}, `Pong in ${Math.round(performance.now() - t0)} ms.`)); } }, 'Ping')),
    out);
}

// inspector returns the session page's section of resources, prompts, log level and ping.
export function inspector(id) {
  return h('div', { class: 'inspector' }, resources(id), prompts(id), utilities(id));
}
