// Forms built from JSON Schema: an elicitation's requestedSchema (MCP "Requested Schema": a flat object of
// strings with formats, numbers and integers with bounds, booleans, enums, titled enums and multi-select
// enums) and a tool's inputSchema (any object schema; a property the form cannot show as one input — an
// object, a free array — is a JSON text area). Labels, descriptions and options are text nodes.
//
// The form does not validate against the schema itself (novalidate): the bridge does, and the person sees
// its field errors (google.rpc.BadRequest) next to the fields, exactly what a REST host would get.

import { h, u, json } from './dom.js';

let formCount = 0;

// optionsOf returns [{value, label}] for an enum-like schema, or null.
function optionsOf(schema) {
  if (!schema || typeof schema !== 'object') return null;
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((v, i) => ({ value: v, label: names[i] !== undefined ? String(names[i]) : String(v) }));
  }
  const alts = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (alts && alts.length && alts.every((a) => a && typeof a === 'object' && 'const' in a)) {
    return alts.map((a) => ({ value: a.const, label: a.title !== undefined ? String(a.title) : String(a.const) }));
  }
  return null;
}

function typeOf(schema) {
  const t = schema && schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') || 'string';
  return t || (optionsOf(schema) ? 'string' : '');
}

const inputTypeOfFormat = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

// fieldFor returns {el, read, input} for one property: el to show, read() → [present, value] or throws
// Error with a message for the field (only for local parse errors, e.g. bad JSON).
function fieldFor(id, name, schema, required, initial) {
  const type = typeOf(schema);
  const options = optionsOf(schema);
  // What the person entered before (a form drawn again), else the schema's default.
  const def = initial !== undefined ? initial : schema ? schema.default : undefined;
  const attrs = { id, name, 'data-field': name };

  if (type === 'boolean') {
    const input = h('input', { ...attrs, type: 'checkbox', checked: def === true });
    return { input, read: () => [true, input.checked] };
  }
  if (options) {
    const select = h('select', attrs,
      h('option', { value: '' }, required ? '— choose —' : '— none —'),
      options.map((o, i) => h('option', { value: String(i), selected: def !== undefined && o.value === def }, o.label)));
    return { input: select, read: () => (select.value === '' ? [false] : [true, options[Number(select.value)].value]) };
  }
  if (type === 'array') {
    const itemOptions = optionsOf(schema.items);
    if (itemOptions) {
      const chosen = Array.isArray(def) ? def : [];
      const boxes = itemOptions.map((o, i) => h('input', { type: 'checkbox', id: `${id}-${i}`, value: String(i), checked: chosen.includes(o.value) }));
      const group = h('div', { class: 'choices', id, 'data-field': name, role: 'group' },
        itemOptions.map((o, i) => h('label', { for: `${id}-${i}`, class: 'choice' }, boxes[i], ' ', o.label)));
      return { input: group, read: () => [true, boxes.filter((b) => b.checked).map((b) => itemOptions[Number(b.value)].value)] };
    }
  }
  if (type === 'number' || type === 'integer') {
    const input = h('input', {
      ...attrs, type: 'number', step: type === 'integer' ? '1' : 'any',
      min: schema.minimum, max: schema.maximum, value: def !== undefined ? def : undefined,
    });
    return {
      input,
      read: () => {
        // What the person typed is not a number (say "2003-6"): the browser keeps it on screen but gives no
        // value. Flag it; never send the form without it as if the field were empty.
        if (input.validity.badInput) throw new Error(`this is not ${type === 'integer' ? 'a whole number' : 'a number'}: correct it or clear the field`);
        if (input.value === '') return [false];
        const n = Number(input.value);
        return [true, Number.isNaN(n) ? input.value : n];
      },
    };
  }
  if (type === 'string' || type === '') {
    if (type === 'string' || (schema && Object.keys(schema).length === 0)) {
      const inputType = inputTypeOfFormat[schema && schema.format] || 'text';
      let value = def !== undefined ? String(def) : undefined;
      if (inputType === 'datetime-local' && value) value = value.slice(0, 16);
      const input = h('input', { ...attrs, type: inputType, minlength: schema && schema.minLength, maxlength: schema && schema.maxLength, value });
      return {
        input,
        read: () => {
          if (input.value === '') return [false];
          if (input.validity.badInput) throw new Error('this is not a complete date: correct it or clear the field');
          if (inputType === 'datetime-local') {
            const d = new Date(input.value);
            return [true, Number.isNaN(d.getTime()) ? input.value : d.toISOString()];
          }
          return [true, input.value];
        },
      };
    }
  }
  // Anything else: JSON.
  const area = h('textarea', { ...attrs, rows: 3, class: 'json', placeholder: 'JSON', value: def !== undefined ? json(def) : undefined });
  return {
    input: area,
    read: () => {
      if (area.value.trim() === '') return [false];
      try { return [true, JSON.parse(area.value)]; } catch (e) { throw new Error(`not valid JSON: ${e.message}`); }
    },
  };
}

// SchemaForm is a form for an object schema. element is the <form>; the caller adds its buttons to
// actions and listens for submit. values() returns the object entered (properties left empty are left out);
// showErrors places field violations next to their fields and returns the ones it could not place.
export class SchemaForm {
  constructor(schema, { pathPrefixes = [], initial = null } = {}) {
    const n = ++formCount;
    this.pathPrefixes = pathPrefixes;
    this.fields = new Map();
    const props = (schema && typeof schema.properties === 'object' && schema.properties) || Object.create(null);
    const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
    this.formError = h('p', { class: 'form-error', role: 'alert', hidden: true });
    this.actions = h('div', { class: 'actions' });
    // The schema's property order does not survive the bridge (a google.protobuf.Struct sorts its keys), so
    // required fields come first, each group in name order.
    const entries = Object.entries(props).sort(([a], [b]) => (required.has(b) - required.has(a)) || (a < b ? -1 : a > b ? 1 : 0));
    const rows = entries.map(([name, prop], i) => {
      // The index keeps ids apart for names that differ only in characters an id cannot hold.
      const id = `f${n}-${i}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
      const f = fieldFor(id, name, prop || {}, required.has(name), initial && Object.hasOwn(initial, name) ? initial[name] : undefined);
      const error = h('p', { class: 'field-error', id: `${id}-error`, role: 'alert', hidden: true, 'data-error-for': name });
      f.input.setAttribute('aria-describedby', `${id}-error`);
      this.fields.set(name, { ...f, error });
      // An error goes when the person edits the field it is about.
      const clear = () => { error.hidden = true; error.textContent = ''; f.input.removeAttribute('aria-invalid'); };
      f.input.addEventListener('input', clear);
      f.input.addEventListener('change', clear);
      const title = prop && prop.title ? String(prop.title) : name;
      return h('div', { class: 'field' },
        h('label', { for: id }, u(title), required.has(name) ? h('span', { class: 'req', title: 'required' }, ' *') : null,
          title !== name ? h('code', { class: 'prop' }, u(name)) : null),
        prop && prop.description ? h('p', { class: 'hint' }, u(prop.description)) : null,
        f.input,
        error);
    });
    if (rows.length === 0) rows.push(h('p', { class: 'hint' }, 'No parameters.'));
    this.element = h('form', { novalidate: true, class: 'schema-form' }, rows, this.formError, this.actions);
  }

  // values returns the entered object; on a local error (bad JSON) it shows it and returns null.
  values() {
    this.clearErrors();
    // No prototype: a property named __proto__ is a property like any other.
    const out = Object.create(null);
    let ok = true;
    for (const [name, f] of this.fields) {
      try {
        const [present, value] = f.read();
        if (present) out[name] = value;
      } catch (e) {
        this.fieldError(name, e.message);
        ok = false;
      }
    }
    if (!ok) {
      const first = [...this.fields.values()].find((f) => f.input.getAttribute('aria-invalid') === 'true');
      if (first) first.input.focus();
    }
    return ok ? out : null;
  }

  // snapshot returns what the fields hold now, leaving out any that cannot be read (no errors shown): kept
  // so that a form drawn again starts from it.
  snapshot() {
    const out = Object.create(null);
    for (const [name, f] of this.fields) {
      try {
        const [present, value] = f.read();
        if (present) out[name] = value;
      } catch { /* not readable now: left out */ }
    }
    return out;
  }

  clearErrors() {
    for (const f of this.fields.values()) { f.error.hidden = true; f.error.textContent = ''; f.input.removeAttribute('aria-invalid'); }
    this.formError.hidden = true;
    this.formError.textContent = '';
  }

  fieldError(name, text) {
    const f = this.fields.get(name);
    f.error.textContent = text;
    f.error.hidden = false;
    f.input.setAttribute('aria-invalid', 'true');
  }

  // showError shows an error of the whole form.
  showError(text) {
    this.formError.textContent = text;
    this.formError.hidden = false;
  }

  // showErrors places the bridge's field violations: a field path such as "answer.elicitation.content.age"
  // or "arguments.city" is matched on what follows one of pathPrefixes; others go to the form's error.
  showErrors(violations, message) {
    const unplaced = [];
    for (const v of violations) {
      let rest = null;
      for (const p of this.pathPrefixes) {
        const i = v.field.lastIndexOf(p);
        if (i >= 0) { rest = v.field.slice(i + p.length); break; }
      }
      const name = rest === null ? null : [...this.fields.keys()].find((k) => rest === k || rest.startsWith(`${k}.`) || rest.startsWith(`${k}[`));
      if (name) this.fieldError(name, v.description);
      else unplaced.push(v);
    }
    const lines = unplaced.map((v) => (v.field ? `${v.field}: ${v.description}` : v.description));
    if (lines.length || (message && violations.length === 0)) this.showError([message, ...lines].filter(Boolean).join('\n'));
  }
}
