// DOM helpers shared by every view: h() to build elements, kubectl's age
// format, toasts, the [data-updated] stamp and the two modal dialogs.

// h builds an element. Attributes named on* with a function become
// listeners; data-*, aria-*, role, anything with a dash and any name the
// element has no property for (tabindex, for, colspan) become attributes;
// the rest are set as properties so that value, checked, disabled and
// hidden behave as in the DOM.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  const svg = el instanceof SVGElement;
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null) continue;
      if (v === false) {
        // false means absent, except where it is a value: aria-expanded,
        // and properties such as spellcheck whose default is true.
        if (k.startsWith('aria-')) el.setAttribute(k, 'false');
        else if (!svg && !k.includes('-') && k !== 'role' && k in el && typeof el[k] === 'boolean') el[k] = false;
        continue;
      }
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (k === 'style' && typeof v === 'object') {
        Object.assign(el.style, v);
      } else if (k === 'class' || k === 'className') {
        if (svg) el.setAttribute('class', v); else el.className = v;
      } else if (svg || k.includes('-') || k === 'role' || !(k in el)) {
        el.setAttribute(k, v === true ? '' : String(v));
      } else {
        el[k] = v;
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// age prints a duration the way kubectl's AGE column does
// (k8s.io/apimachinery/pkg/util/duration.HumanDuration): two units while
// they carry meaning, one after.
export function age(timestamp) {
  if (!timestamp) return '<unknown>';
  const t = typeof timestamp === 'number' ? timestamp : Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration((Date.now() - t) / 1000);
}

export function humanDuration(seconds) {
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  const s = Math.floor(seconds);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const hr = Math.floor(m / 60);
  if (hr < 8) return m % 60 === 0 ? `${hr}h` : `${hr}h${m % 60}m`;
  if (hr < 48) return `${hr}h`;
  const d = Math.floor(hr / 24);
  if (hr < 24 * 8) return hr % 24 === 0 ? `${d}d` : `${d}d${hr % 24}h`;
  if (hr < 24 * 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (hr < 24 * 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

// markUpdated stamps the time the view's data last changed on screen; the
// latency benchmark reads it, so it is taken after the DOM work is done.
export function markUpdated(root) {
  if (!root) return;
  root.setAttribute('data-updated', String(Math.round(performance.timeOrigin + performance.now())));
}

function toastArea() {
  let area = document.querySelector('[data-toasts]');
  if (!area) {
    area = h('div', { class: 'toasts', 'data-toasts': '', role: 'status', 'aria-live': 'polite' });
    document.body.appendChild(area);
  }
  return area;
}

export function toast(message, kind = 'info') {
  const t = h('div', { class: `toast toast-${kind}`, 'data-toast': kind, role: kind === 'error' ? 'alert' : null },
    h('span', null, message),
    h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', onclick: () => t.remove() }, '\u00d7'));
  toastArea().appendChild(t);
  setTimeout(() => t.remove(), kind === 'error' ? 10000 : 4000);
  return t;
}

// showError puts an action's failure where the tests and the user look for
// it: the page's [data-error] area, and a toast.
export function showError(err) {
  const msg = err && err.message ? err.message : String(err);
  const area = document.querySelector('[data-error]');
  if (area) {
    area.textContent = msg;
    area.hidden = false;
  }
  toast(msg, 'error');
}

export function clearError() {
  const area = document.querySelector('[data-error]');
  if (area) {
    area.textContent = '';
    area.hidden = true;
  }
}

// modal opens a <dialog> and resolves with what build's resolve was called
// with; Escape and the cancel button resolve to the cancel value.
function modal(name, title, cancelValue, build) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      dlg.close();
      dlg.remove();
      resolve(v);
    };
    const titleId = `dlg-${name}-${Math.random().toString(36).slice(2, 8)}`;
    const dlg = h('dialog', { 'data-dialog': name, class: 'dialog', 'aria-labelledby': titleId });
    dlg.appendChild(h('h2', { id: titleId }, title));
    build(dlg, finish);
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); finish(cancelValue); });
    document.body.appendChild(dlg);
    dlg.showModal();
  });
}

export function confirmDialog({ title, body, confirmLabel = 'OK', name = 'confirm', danger = false }) {
  return modal(name, title, false, (dlg, finish) => {
    if (body) dlg.appendChild(body instanceof Node ? body : h('p', null, body));
    const ok = h('button', { type: 'button', class: danger ? 'btn danger' : 'btn primary', 'data-confirm': '', onclick: () => finish(true) }, confirmLabel);
    dlg.appendChild(h('div', { class: 'dialog-buttons' },
      h('button', { type: 'button', class: 'btn', 'data-cancel': '', onclick: () => finish(false) }, 'Cancel'), ok));
    queueMicrotask(() => ok.focus());
  });
}

// formDialog fields: {name, label, type ('text', 'number', 'select',
// 'checkbox', 'textarea'), value, options (for select: strings or
// {value, label}), help, required, min}.
export function formDialog({ title, name = 'form', fields, confirmLabel = 'OK', body }) {
  return modal(name, title, null, (dlg, finish) => {
    const form = h('form', { method: 'dialog', class: 'dialog-form' });
    if (body) form.appendChild(body instanceof Node ? body : h('p', null, body));
    const inputs = [];
    for (const f of fields) {
      const id = `f-${name}-${f.name}`;
      let input;
      if (f.type === 'select') {
        input = h('select', { id, name: f.name },
          (f.options || []).map((o) => {
            const opt = typeof o === 'object' ? o : { value: o, label: o };
            return h('option', { value: opt.value, selected: String(opt.value) === String(f.value) }, opt.label);
          }));
      } else if (f.type === 'textarea') {
        input = h('textarea', { id, name: f.name, value: f.value ?? '', rows: 8 });
      } else if (f.type === 'checkbox') {
        input = h('input', { id, name: f.name, type: 'checkbox', checked: !!f.value });
      } else {
        input = h('input', { id, name: f.name, type: f.type || 'text', value: f.value ?? '', required: !!f.required, min: f.min });
      }
      inputs.push([f, input]);
      form.appendChild(h('div', { class: f.type === 'checkbox' ? 'field field-check' : 'field' },
        h('label', { for: id }, f.label || f.name), input,
        f.help ? h('small', { class: 'help' }, f.help) : null));
    }
    form.appendChild(h('div', { class: 'dialog-buttons' },
      h('button', { type: 'button', class: 'btn', 'data-cancel': '', onclick: () => finish(null) }, 'Cancel'),
      h('button', { type: 'submit', class: 'btn primary', 'data-confirm': '' }, confirmLabel)));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (!form.reportValidity()) return;
      const out = {};
      for (const [f, input] of inputs) {
        if (f.type === 'checkbox') out[f.name] = input.checked;
        else if (f.type === 'number') out[f.name] = input.value === '' ? null : Number(input.value);
        else out[f.name] = input.value;
      }
      finish(out);
    });
    dlg.appendChild(form);
    queueMicrotask(() => inputs[0] && inputs[0][1].focus());
  });
}

// Quantities as the API writes them (resource.Quantity), to numbers: CPU in
// cores, memory in bytes.
const suffixes = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6,
};

export function parseQuantity(q) {
  if (q === undefined || q === null || q === '') return 0;
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)$/.exec(String(q).trim());
  if (!m) return 0;
  const n = parseFloat(m[1]) * (m[2] ? 10 ** Number(m[2]) : 1);
  return n * (suffixes[m[3]] ?? 1);
}

export function formatBytes(n) {
  const units = ['B', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n >= 10 || i === 0 || Number.isInteger(n) ? Math.round(n) : n.toFixed(1)}${units[i]}`;
}

export function formatCPU(cores) {
  if (cores < 1) return `${Math.round(cores * 1000)}m`;
  return `${Number.isInteger(cores) ? cores : cores.toFixed(2)}`;
}
