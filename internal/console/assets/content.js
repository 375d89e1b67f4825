// Rendering of MCP content: tool results (content blocks, structured content, isError) and errors of the API.
// Text is text: a server's markup shows as the characters it is made of.

import { h, u, dataURL, json } from './dom.js';
import { warning, collidingKeys } from './untrusted.js';

// block renders one ContentBlock ({text: {…}} | {image: {…}} | …).
export function block(b) {
  if (!b || typeof b !== 'object') return h('pre', { class: 'content' }, json(b));
  if (b.text) return h('pre', { class: 'content text' }, String(b.text.text || ''));
  if (b.image) {
    const src = dataURL('image', b.image.mimeType, b.image.data);
    return src ? h('img', { class: 'content image', src, alt: `image (${b.image.mimeType})` })
      : h('p', { class: 'content' }, `image of type ${String(b.image.mimeType || '?')} (not shown)`);
  }
  if (b.audio) {
    const src = dataURL('audio', b.audio.mimeType, b.audio.data);
    return src ? h('audio', { class: 'content audio', src, controls: true })
      : h('p', { class: 'content' }, `audio of type ${String(b.audio.mimeType || '?')} (not shown)`);
  }
  if (b.resourceLink) {
    const l = b.resourceLink;
    return h('p', { class: 'content link' }, 'resource link: ', h('code', {}, u(l.uri || '')),
      l.title || l.name ? [' — ', u(l.title || l.name)] : '', l.description ? [' (', u(l.description), ')'] : '');
  }
  if (b.resource) {
    const r = b.resource.resource || {};
    return h('div', { class: 'content resource' }, h('p', {}, 'resource ', h('code', {}, u(r.uri || '')), r.mimeType ? [' (', u(r.mimeType), ')'] : ''),
      r.text !== undefined ? h('pre', {}, String(r.text)) : h('p', { class: 'hint' }, `binary, ${String(r.blob || '').length} base64 characters`));
  }
  return h('pre', { class: 'content' }, json(b));
}

// toolResult renders a CallToolResult.
export function toolResult(result) {
  const r = result || {};
  const parts = [];
  if (r.isError) parts.push(h('p', { class: 'tool-error', role: 'alert' }, 'The tool reported an error (isError):'));
  for (const b of r.content || []) parts.push(block(b));
  if (r.structuredContent !== undefined) {
    parts.push(h('h4', {}, 'Structured content'), h('pre', { class: 'structured' }, json(r.structuredContent)));
  }
  if (r.task) parts.push(h('p', {}, 'The server runs the call as task ', h('code', {}, u(r.task.taskId || '')), '.'));
  if (parts.length === 0) parts.push(h('p', { class: 'hint' }, 'The result is empty.'));
  const el = h('div', { class: r.isError ? 'result is-error' : 'result', 'data-result': r.isError ? 'error' : 'ok' }, parts);
  const warn = warning(el, r.structuredContent !== undefined ? collidingKeys(r.structuredContent) : []);
  if (warn) el.prepend(warn);
  return el;
}

// Names of the google.rpc.Code values.
const codeNames = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS',
  'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL',
  'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'];

// Words for the reasons a person meets most.
const reasonWords = {
  APPROVAL_DENIED: 'An approver denied the call.',
  APPROVAL_EXPIRED: 'No approver decided in time.',
  SESSION_NOT_FOUND: 'The session is gone (closed, expired, or the bridge restarted without it).',
  CALL_OUTCOME_UNKNOWN: 'The call was cut off; whether the server acted is not known.',
};

// apiError renders an APIError (or any Error).
// The status, the reason and the message, in words: "HTTP 403 · PERMISSION_DENIED · APPROVAL_DENIED".
export function apiError(err) {
  const e = err || {};
  const status = [e.httpStatus ? `HTTP ${e.httpStatus}` : 'Error', codeNames[e.code] || '', e.reason || ''].filter(Boolean).join(' · ');
  const words = reasonWords[e.reason];
  return h('div', { class: 'api-error', role: 'alert', 'data-reason': e.reason || undefined },
    h('p', { class: 'status' }, h('strong', {}, status)),
    words ? h('p', { class: 'words' }, words) : null,
    h('p', { class: 'message' }, u(String(e.message || e))),
    (e.fieldViolations || []).length ? h('ul', {}, e.fieldViolations.map((v) => h('li', {}, h('code', {}, u(v.field)), ' ', u(v.description)))) : null);
}
