// Untrusted text shown as what it is (docs/adr/0092-console-untrusted-text-and-survival.md). Every string a
// server or a host supplies goes through here on its way to the page (dom.js's append does it for every string
// child): characters a person cannot see — bidi controls, zero-width and other format characters, controls,
// unusual spaces, variation selectors, tag characters — are replaced, in place, by a visible marked token such
// as ⟨U+202E⟩, so that the text a person reads is the text that will be sent; letters of another script that
// look like Latin ones inside a Latin word (Cyrillic а in "pаypal") keep their glyph and get the token after
// them. A string longer than LONG characters shows its first LONG and a "Show all" button. The element
// holding the tokens is a <bdi dir="auto"> (unicode-bidi: isolate), so right-to-left text of a server cannot
// reorder the console's own sentence around it.

// LONG is how many characters of a string are shown before "Show all".
export const LONG = 4000;

// hiddenRe matches one character a person cannot see or tell from a space: format characters (bidi controls,
// zero-width characters, the BOM, tags, soft hyphen…), controls other than tab, line feed and carriage
// return, spaces other than U+0020, line and paragraph separators, variation selectors, Hangul fillers, the
// combining grapheme joiner and the braille blank.
const hiddenRe = /[\p{Cf}\p{Co}\p{Cn}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\u034F\u115F\u1160\u3164\uFFA0\u2800\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;

// Names of the characters most used to deceive, for the token's tooltip.
const names = {
  0x200B: 'ZERO WIDTH SPACE', 0x200C: 'ZERO WIDTH NON-JOINER', 0x200D: 'ZERO WIDTH JOINER', 0x200E: 'LEFT-TO-RIGHT MARK',
  0x200F: 'RIGHT-TO-LEFT MARK', 0x202A: 'LEFT-TO-RIGHT EMBEDDING', 0x202B: 'RIGHT-TO-LEFT EMBEDDING', 0x202C: 'POP DIRECTIONAL FORMATTING',
  0x202D: 'LEFT-TO-RIGHT OVERRIDE', 0x202E: 'RIGHT-TO-LEFT OVERRIDE', 0x2066: 'LEFT-TO-RIGHT ISOLATE', 0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE', 0x2069: 'POP DIRECTIONAL ISOLATE', 0x061C: 'ARABIC LETTER MARK', 0xFEFF: 'ZERO WIDTH NO-BREAK SPACE',
  0x00AD: 'SOFT HYPHEN', 0x2060: 'WORD JOINER', 0x00A0: 'NO-BREAK SPACE', 0x3164: 'HANGUL FILLER',
};

// lookAlikeRe matches a letter of a script whose letters are taken for Latin ones (Cyrillic, Greek, Armenian,
// Cherokee) or a fullwidth Latin letter or digit.
const lookAlikeRe = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]/u;
const latinRe = /[A-Za-z]/;
const wordRe = /[\p{L}\p{N}\p{M}]+/gu;
const anyLookAlikeRe = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]/u;
const anyHiddenRe = new RegExp(hiddenRe.source, 'u');

export function codePoint(ch) {
  return `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

// token is the visible stand-in of a character.
export function token(ch) {
  return `⟨${codePoint(ch)}⟩`;
}

// lookAlikes returns the indexes (in UTF-16 units) of look-alike letters of s: those inside a word that also
// has Latin letters, and fullwidth ones anywhere.
function lookAlikes(s) {
  const at = new Set();
  if (!anyLookAlikeRe.test(s)) return at;
  for (const m of s.matchAll(wordRe)) {
    const w = m[0];
    const mixed = latinRe.test(w);
    let i = 0;
    for (const ch of w) {
      const fullwidth = /[\uFF10-\uFF5A]/.test(ch);
      if ((mixed || fullwidth) && lookAlikeRe.test(ch)) at.add(m.index + i);
      i += ch.length;
    }
  }
  return at;
}

// scan counts what reveal would mark in s: {hidden, lookAlike}.
export function scan(s) {
  s = String(s);
  let hidden = 0;
  if (anyHiddenRe.test(s)) for (const ch of s) if (hiddenRe.test(ch)) hidden++;
  return { hidden, lookAlike: lookAlikes(s).size };
}

// needsReveal says whether s has anything to mark.
export function needsReveal(s) {
  return anyHiddenRe.test(s) || anyLookAlikeRe.test(s);
}

// plain returns s with every hidden character replaced by its token (for places that hold text only: an
// <option>, a title, the tab's title).
export function plain(s) {
  s = String(s);
  if (!needsReveal(s)) return s;
  const la = lookAlikes(s);
  let out = '';
  let i = 0;
  for (const ch of s) {
    if (hiddenRe.test(ch)) out += token(ch);
    else if (la.has(i)) out += ch + token(ch);
    else out += ch;
    i += ch.length;
  }
  return out;
}

// strip returns s without its hidden characters, normalized (NFKC): what two keys look like to a person.
export function strip(s) {
  let out = '';
  for (const ch of String(s)) if (!hiddenRe.test(ch)) out += ch;
  return out.normalize('NFKC');
}

// marked returns the nodes showing s with its hidden and look-alike characters as marked tokens.
function marked(s) {
  const nodes = [];
  const la = lookAlikes(s);
  let run = '';
  let i = 0;
  const flush = () => { if (run) { nodes.push(document.createTextNode(run)); run = ''; } };
  for (const ch of s) {
    if (hiddenRe.test(ch)) {
      flush();
      const m = document.createElement('mark');
      m.className = 'u-hidden';
      m.title = `${codePoint(ch)}${names[ch.codePointAt(0)] ? ` ${names[ch.codePointAt(0)]}` : ''}: an invisible character`;
      m.textContent = token(ch);
      nodes.push(m);
    } else if (la.has(i)) {
      flush();
      const m = document.createElement('mark');
      m.className = 'u-lookalike';
      m.title = `${codePoint(ch)}: a letter that looks like a Latin one but is not`;
      m.textContent = ch + token(ch);
      nodes.push(m);
    } else {
      run += ch;
    }
    i += ch.length;
  }
  flush();
  return nodes;
}

// reveal returns a node showing s: a text node when s is short and holds nothing to mark, else a <bdi
// class="u"> with the marked tokens and, past LONG characters, the rest behind a "Show all" button (the
// characters not yet shown are counted in data-hidden-rest so that a card's warning counts them too).
export function reveal(s, { isolate = false } = {}) {
  s = String(s);
  const special = needsReveal(s);
  if (!special && s.length <= LONG && !isolate) return document.createTextNode(s);
  const el = document.createElement('bdi');
  el.className = 'u';
  el.dir = 'auto';
  if (s.length <= LONG) {
    el.append(...(special ? marked(s) : [s]));
    return el;
  }
  let cut = LONG;
  if (/[\uDC00-\uDFFF]/.test(s[cut])) cut--; // not between the halves of a surrogate pair
  const rest = s.slice(cut);
  const more = document.createElement('button');
  more.type = 'button';
  more.className = 'show-more';
  more.textContent = `Show all ${s.length.toLocaleString()} characters`;
  const counts = scan(rest);
  if (counts.hidden + counts.lookAlike) el.dataset.hiddenRest = String(counts.hidden + counts.lookAlike);
  const ellipsis = document.createTextNode('… ');
  const less = document.createElement('button');
  less.type = 'button';
  less.className = 'show-less';
  less.textContent = 'Show less';
  let shown = [];
  more.addEventListener('click', () => {
    shown = marked(rest);
    ellipsis.remove();
    more.replaceWith(...shown, less);
    delete el.dataset.hiddenRest;
  });
  less.addEventListener('click', () => {
    for (const n of shown) n.remove();
    less.replaceWith(ellipsis, more);
    if (counts.hidden + counts.lookAlike) el.dataset.hiddenRest = String(counts.hidden + counts.lookAlike);
    more.focus();
  });
  el.append(...marked(s.slice(0, cut)), ellipsis, more);
  return el;
}

// findings counts the marked characters inside el, shown or still collapsed.
export function findings(el) {
  let n = el.querySelectorAll('mark.u-hidden, mark.u-lookalike').length;
  for (const c of el.querySelectorAll('[data-hidden-rest]')) n += Number(c.dataset.hiddenRest) || 0;
  for (const c of el.querySelectorAll('[data-hidden]')) n += Number(c.dataset.hidden) || 0; // text-only elements (options)
  return n;
}

// collidingKeys returns the groups of keys, anywhere in value, that look the same once their hidden
// characters are removed (e.g. "to" and "to\u200B"): [[path, [key, key…]], …].
export function collidingKeys(value) {
  const out = [];
  const seen = new Set();
  const walk = (v, path, depth) => {
    if (!v || typeof v !== 'object' || depth > 64 || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1)); return; }
    const groups = new Map();
    for (const k of Object.keys(v)) {
      const s = strip(k);
      if (!groups.has(s)) groups.set(s, []);
      groups.get(s).push(k);
    }
    for (const ks of groups.values()) if (ks.length > 1) out.push([path || '(top)', ks]);
    for (const k of Object.keys(v)) walk(v[k], `${path}.${k}`, depth + 1);
  };
  walk(value, '', 0);
  return out;
}

// warning returns the warning a card shows when el holds marked characters or collisions lists colliding keys,
// or null: role=alert, so a screen reader says it too.
export function warning(el, collisions = []) {
  const n = findings(el);
  if (!n && !collisions.length) return null;
  const p = document.createElement('div');
  p.className = 'u-warning';
  p.setAttribute('role', 'alert');
  const parts = [];
  if (n) parts.push(`${n} invisible, direction-changing or look-alike character${n === 1 ? '' : 's'}, shown marked as ⟨U+…⟩ where ${n === 1 ? 'it is' : 'they are'}`);
  if (collisions.length) parts.push(`${collisions.length} set${collisions.length === 1 ? '' : 's'} of keys that look the same`);
  const head = document.createElement('strong');
  head.textContent = 'Careful: ';
  p.append(head, `this holds ${parts.join(' and ')}. What you read may not be what it says.`);
  if (collisions.length) {
    const ul = document.createElement('ul');
    for (const [path, keys] of collisions) {
      const li = document.createElement('li');
      li.append(`at ${plain(path)}: `, keys.map((k) => JSON.stringify(plain(k))).join(', '));
      ul.append(li);
    }
    p.append(ul);
  }
  p.dataset.findings = String(n + collisions.length);
  return p;
}
