// DOM helpers. Every string the console shows — from a server, a host or the bridge — becomes a text node or
// an attribute value through these; nothing is ever parsed as HTML (no innerHTML, no insertAdjacentHTML).

// h creates an element. attrs are set with setAttribute, except: a function under a name starting with "on"
// becomes an event listener (a string there is ignored: no inline handlers), href and src go through safeURL
// (src may also be a data: URL of an image or audio, see dataURL),
// value and checked set the properties. Children are nodes or strings (text nodes); null and false are skipped;
// arrays are flattened.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) {
      if (typeof value === 'function') el.addEventListener(name.slice(2), value);
      continue;
    }
    if (name === 'href' || name === 'src') {
      // src takes the data: URLs dataURL made (its checks are the ones that matter); anything else, like
      // href, must be http(s).
      const v = String(value);
      el.setAttribute(name, name === 'src' && /^data:(image|audio)\//.test(v) ? v : safeURL(v));
      continue;
    }
    if (name === 'value') { el.value = String(value); continue; }
    if (name === 'checked') { el.checked = Boolean(value); continue; }
    el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings as text nodes, arrays) to el.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// replace empties el and adds children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// safeURL returns url if it is an absolute http(s) URL or a same-origin path, otherwise "#": a server-supplied
// link can never be javascript:, data: or anything else a click would run.
export function safeURL(url) {
  try {
    const u = new URL(String(url), location.href);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.href;
  } catch { /* not a URL */ }
  return '#';
}

// dataURL returns a data: URL for base64 data of a media type of the given family ("image", "audio"), or ""
// when the type is not one (so a server cannot smuggle text/html or SVG script into an <img>).
export function dataURL(family, mimeType, base64) {
  const safe = { image: /^image\/(png|jpeg|gif|webp|avif|bmp)$/, audio: /^audio\/[a-z0-9.+-]+$/ }[family];
  if (!safe || !safe.test(String(mimeType || '').toLowerCase())) return '';
  if (!/^[A-Za-z0-9+/=_-]*$/.test(String(base64 || ''))) return '';
  return `data:${mimeType};base64,${base64}`;
}

// json formats a value for a <pre>.
export function json(value) {
  return JSON.stringify(value, null, 2);
}

// shortTime formats an RFC 3339 timestamp as local time of day.
export function shortTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleTimeString();
}

// enumLabel turns "SESSION_STATE_READY" into "ready" given the prefix "SESSION_STATE_".
export function enumLabel(value, prefix) {
  if (!value) return '';
  return String(value).replace(prefix, '').toLowerCase().replaceAll('_', ' ');
}
