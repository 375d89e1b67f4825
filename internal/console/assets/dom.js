// DOM helpers. Every string the console shows — from a server, a host or the bridge — becomes a text node or
// an attribute value through these; nothing is ever parsed as HTML (no innerHTML, no insertAdjacentHTML).
// Every string child goes through untrusted.js's reveal: its invisible and look-alike characters become
// visible marked tokens, and a very long one is collapsed behind "Show all".

import { reveal, plain, scan } from './untrusted.js';

const scanCount = (s) => { const c = scan(s); return c.hidden + c.lookAlike; };

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
      // A fragment is one of the console's own routes (#/sessions/…); server-supplied links come checked.
      if (name === 'href' && v.startsWith('#')) el.setAttribute(name, v);
      else el.setAttribute(name, name === 'src' && /^data:(image|audio)\//.test(v) ? v : safeURL(v));
      continue;
    }
    if (name === 'value') { el.value = String(value); continue; }
    if (textAttrs.has(name)) { el.setAttribute(name, plain(value)); continue; }
    if (name === 'checked') { el.checked = Boolean(value); continue; }
    el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

// Attributes a person reads: their hidden characters become tokens too.
const textAttrs = new Set(['title', 'aria-label', 'placeholder', 'alt']);

// Elements that hold text only: a string in them gets its tokens as plain text, without <mark>.
const textOnly = new Set(['OPTION', 'TEXTAREA', 'TITLE']);

// append adds children (nodes, strings revealed as text, arrays) to el.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    if (c instanceof Node) el.append(c);
    else if (textOnly.has(el.tagName)) {
      const text = plain(c);
      if (text !== String(c)) el.dataset.hidden = String((Number(el.dataset.hidden) || 0) + scanCount(String(c)));
      el.append(document.createTextNode(text));
    }
    else el.append(reveal(String(c)));
  }
  return el;
}

// u shows a string a server or host supplied, isolated (<bdi dir="auto">) and revealed.
export function u(s) {
  return reveal(String(s ?? ''), { isolate: true });
}

// replace empties el and adds children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// linkCheck says whether a server-supplied URL may be a link: only an absolute https URL, or http to a
// loopback address (a local sign-in page). Returns {url: URL} or {reason}. A relative URL is refused rather
// than resolved, so that it can never pass for an address of the bridge itself.
export function linkCheck(raw) {
  let u;
  try { u = new URL(String(raw)); } catch { return { reason: 'it is not an absolute URL' }; }
  if (u.protocol === 'https:') return { url: u };
  if (u.protocol === 'http:') {
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1') return { url: u };
    return { reason: 'it is plain http to another machine' };
  }
  return { reason: `its scheme ${u.protocol} is not https` };
}

// safeURL returns url if linkCheck allows it, otherwise "#": a server-supplied link can never be javascript:,
// data:, relative or anything else a click would run.
export function safeURL(url) {
  const c = linkCheck(url);
  return c.url ? c.url.href : '#';
}

// Second-level names under which registrations are made (a short list: the page has no public suffix list).
const publicSecond = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go', 'gob', 'nic', 'mil', 'ltd', 'plc', 'sch']);

// registrableDomain approximates the domain a host was registered under ("login.example.co.uk" →
// "example.co.uk"); an IP address is itself. The hostname is as URL gives it (an IDN in punycode, xn--…).
export function registrableDomain(hostname) {
  const h = String(hostname).replace(/^\[|\]$/g, '');
  if (/^[0-9.]+$/.test(h) || h.includes(':')) return h;
  const labels = h.split('.').filter(Boolean);
  if (labels.length <= 2) return labels.join('.');
  const n = labels.length;
  const take = publicSecond.has(labels[n - 2]) && labels[n - 1].length === 2 ? 3 : 2;
  return labels.slice(n - take).join('.');
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
