// Rendering of MCP content: tool results (content blocks, structured content, isError) and errors of the API.
// Text is text: a server's markup shows as the characters it is made of.

import { h, dataURL, json } from './dom.js';

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
    return h('p', { class: 'content link' }, 'resource link: ', h('code', {}, String(l.uri || '')),
      l.title || l.name ? ` — ${String(l.title || l.name)}` : '', l.description ? ` (${String(l.description)})` : '');
  }
  if (b.resource) {
    const r = b.resource.resource || {};
    return h('div', { class: 'content resource' }, h('p', {}, 'resource ', h('code', {}, String(r.uri || '')), r.mimeType ? ` (${String(r.mimeType)})` : ''),
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
  if (r.task) parts.push(h('p', {}, 'The server runs the call as task ', h('code', {}, String(r.task.taskId || '')), '.'));
  if (parts.length === 0) parts.push(h('p', { class: 'hint' }, 'The result is empty.'));
  return h('div', { class: r.isError ? 'result is-error' : 'result', 'data-result': r.isError ? 'error' : 'ok' }, parts);
}

// apiError renders an APIError (or any Error).
export function apiError(err) {
  const e = err || {};
  return h('div', { class: 'api-error', role: 'alert' },
    h('p', {}, h('strong', {}, e.httpStatus ? `HTTP ${e.httpStatus}` : 'Error'), e.reason ? ` ${e.reason}` : '', ': ', String(e.message || e)),
    (e.fieldViolations || []).length ? h('ul', {}, e.fieldViolations.map((v) => h('li', {}, h('code', {}, v.field), ' ', v.description))) : null);
}
