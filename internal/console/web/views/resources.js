// The generic resources view (#/resources[/GROUP/VERSION/RESOURCE]): every
// kind the server serves, from discovery, grouped by API group; the chosen
// kind's objects listed live in the server's own Table form (kubectl's
// columns, custom resources included); and "Create" from pasted YAML
// through server-side apply.

import { h, clear, age, markUpdated, showError, clearError, toast } from '../lib/dom.js';
import { table } from '../lib/table.js';
import { discovery, canI, request, getToken, resourcePath, apply, ApiError } from '../lib/api.js';
import { documents, identity, splitAPIVersion } from '../lib/yaml.js';

// kubectl's own Accept for `kubectl get`: the Table, or the plain list from
// a server (an aggregated API) that cannot print one.
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
// Table pages are larger than api.js's object pages: a row is small, and
// a page costs the server more per request than per row, so 3,000
// ConfigMaps list in one 0.15s request against 0.19s for each page of 500.
const LIST_LIMIT = 5000;

export async function mount(outlet, ctx) {
  // Five or four parts name one object: that is resource.js's page, in
  // case the router sends every #/resources/... here.
  if ((ctx.params || []).length >= 4) {
    const m = await import('./resource.js');
    return m.mount(outlet, ctx);
  }
  const view = new ResourcesView(outlet, ctx);
  return () => view.unmount();
}

// groupLabel names an API group as kubectl api-resources would leave it
// blank: the core group gets a name people know.
export function groupLabel(group) {
  return group === '' ? 'core (v1)' : group;
}

// routeOf builds the route of a kind's list, or of one of its objects.
export function routeOf(r, namespace, name) {
  const parts = ['#/resources', r.group || 'core', r.version, r.resource];
  if (name) {
    if (r.namespaced && namespace) parts.push(encodeURIComponent(namespace));
    parts.push(encodeURIComponent(name));
  }
  return parts.join('/');
}

// findResource finds the discovery entry a route names.
export function findResource(all, group, version, resource) {
  const g = group === 'core' ? '' : group;
  return all.find((r) => r.group === g && r.resource === resource && r.version === version)
    || all.find((r) => r.group === g && r.resource === resource)
    || null;
}

// isLabelSelector tells a label selector typed in the search box from a
// name: selectors have an operator, names cannot contain one.
export function isLabelSelector(text) {
  return /[=!]|\s(in|notin)\s*\(/.test(text);
}

// The styles of these two views and of the diff. They live here, not in
// style.css (which another module owns), and go into the page once, as a
// <style> element the page's CSP allows ('unsafe-inline' for styles).
const CSS = `
.resources-view { display: grid; grid-template-columns: minmax(180px, 230px) minmax(0, 1fr); gap: 16px; align-items: start; }
.kinds-panel input { width: 100%; }
.kinds-panel { display: grid; gap: 8px; position: sticky; top: 0; max-height: calc(100vh - 120px); overflow: auto; padding: 2px 6px 2px 2px; }
.kinds h3 { font-size: 11.5px; text-transform: uppercase; letter-spacing: 0.03em; color: var(--muted); margin: 10px 0 2px; font-weight: 600; overflow-wrap: anywhere; }
.kinds ul { list-style: none; margin: 0; padding: 0; }
.kinds a { display: block; padding: 2px 8px; border-radius: 4px; text-decoration: none; color: var(--fg); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.kinds a:hover { background: var(--hover); }
.kinds a[aria-current=page] { background: var(--active); font-weight: 600; }
.view-header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 12px; justify-content: space-between; margin-bottom: 8px; }
.view-header h2 small { font-weight: 400; font-size: 12.5px; }
.view-header .actions, .editor .actions { display: flex; flex-wrap: wrap; gap: 8px; }
.resource-view { display: grid; gap: 10px; min-width: 0; }
.breadcrumbs { font-size: 12.5px; color: var(--muted); }
.resource-view pre.code { background: var(--code-bg); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; overflow: auto; max-height: calc(100vh - 300px); margin: 0; }
.editor { display: grid; gap: 8px; }
textarea.code { width: 100%; min-height: 12em; resize: vertical; tab-size: 2; white-space: pre; overflow: auto; }
.dialog-wide { width: min(760px, 94vw); }
.dialog-wide textarea.code { min-height: 18em; }
.resource-view .notice { background: var(--warn-bg); color: var(--fg); border-radius: 6px; padding: 6px 10px; margin: 0; }
.resource-view .error, .dialog .error { color: var(--bad); background: var(--bad-bg); border-radius: 6px; padding: 6px 10px; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.yaml-options { font-size: 12.5px; color: var(--muted); display: flex; align-items: center; gap: 4px; }
.diff { font-family: var(--mono); font-size: 12.5px; background: var(--code-bg); border: 1px solid var(--border); border-radius: 6px; padding: 6px 0; overflow: auto; max-height: 50vh; white-space: pre; }
.diff .diff-line { display: block; padding: 0 10px; text-decoration: none; }
.diff ins.diff-line { background: var(--ok-bg); color: var(--ok); }
.diff del.diff-line { background: var(--bad-bg); color: var(--bad); }
.diff .diff-fold { display: block; width: 100%; text-align: left; border: 0; border-block: 1px dashed var(--border); background: none; color: var(--muted); padding: 1px 10px; cursor: pointer; font: inherit; }
.diff .diff-fold:hover { background: var(--hover); }
.diff .diff-empty { margin: 0; padding: 0 10px; color: var(--muted); font-family: var(--font); }
table.simple { border-collapse: collapse; width: 100%; font-size: 12.5px; }
table.simple th { text-align: left; color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--border); padding: 4px 8px; }
table.simple td { border-bottom: 1px solid var(--border); padding: 4px 8px; vertical-align: top; }
table.simple tr.warning td:first-child { color: var(--warn); font-weight: 600; }
.schema { margin: 0 0 10px; font-size: 12.5px; }
.schema summary { cursor: pointer; color: var(--muted); }
.schema-body { max-height: 40vh; overflow: auto; border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; background: var(--panel); margin-top: 6px; }
.schema h4 { margin: 10px 0 4px; font-size: 12.5px; }
.resources-view .error { color: var(--bad); }
.resources-view :focus-visible, .resource-view :focus-visible { outline: 2px solid var(--focus); outline-offset: 1px; }
@media (max-width: 900px) { .resources-view { grid-template-columns: 1fr; } .kinds-panel { position: static; max-height: 240px; } }
`;

export function ensureStyles() {
  if (document.querySelector('style[data-styles=resources]')) return;
  const s = document.createElement('style');
  s.setAttribute('data-styles', 'resources');
  s.textContent = CSS;
  document.head.appendChild(s);
}

class ResourcesView {
  constructor(outlet, ctx) {
    ensureStyles();
    this.ctx = ctx;
    this.search = (ctx.search || '').trim();
    this.kindFilter = '';
    this.selected = null;
    this.watch = null;
    this.stopped = false;
    this.root = h('section', { 'data-view': 'resources', class: 'view resources-view', 'aria-labelledby': 'resources-title' });
    clear(outlet).appendChild(this.root);
    this.render();
    this.offSearch = ctx.onSearch ? ctx.onSearch((text) => this.onSearch(text)) : null;
    this.ageTimer = setInterval(() => this.table && this.table.refresh(), 10000);
  }

  unmount() {
    this.stopped = true;
    if (this.watch) this.watch.stop();
    clearInterval(this.ageTimer);
    clearTimeout(this.searchTimer);
    if (typeof this.offSearch === 'function') this.offSearch();
  }

  async render() {
    this.kindsNav = h('nav', { class: 'kinds', 'aria-label': 'Resource kinds' }, h('p', { class: 'muted' }, 'Loading kinds…'));
    this.kindsInput = h('input', {
      type: 'search', id: 'kinds-filter', 'data-filter-kinds': '', placeholder: 'Filter kinds (Enter opens)',
      autocomplete: 'off', value: '', oninput: () => { this.kindFilter = this.kindsInput.value; this.renderKinds(); },
      // Enter opens the first kind left, so "dep⏎" is a keyboard shortcut
      // to Deployments.
      onkeydown: (e) => {
        if (e.key !== 'Enter') return;
        const first = this.kindsNav.querySelector('a[data-kind]');
        if (first) { e.preventDefault(); this.ctx.navigate(first.getAttribute('href')); }
      },
    });
    this.main = h('div', { class: 'kind-objects' });
    this.root.append(
      h('aside', { class: 'kinds-panel' },
        h('label', { for: 'kinds-filter', class: 'visually-hidden' }, 'Filter kinds'),
        this.kindsInput, this.kindsNav),
      this.main);
    try {
      this.all = (await discovery()).filter((r) => r.verbs.includes('list'));
    } catch (e) {
      clear(this.kindsNav).appendChild(h('p', { class: 'error', role: 'alert' }, e.message));
      return;
    }
    if (this.stopped) return;
    const p = this.ctx.params || [];
    if (p.length === 3) {
      this.selected = findResource(this.all, p[0], p[1], p[2])
        || (await lookupKind(p[0] === 'core' ? '' : p[0], p[1], '', p[2]));
      if (this.stopped) return;
    }
    this.renderKinds();
    this.renderMain();
  }

  // The search box filters the kinds until one is chosen, then its objects.
  onSearch(text) {
    this.search = (text || '').trim();
    if (!this.selected) { this.renderKinds(); return; }
    clearTimeout(this.searchTimer);
    // A label selector is the server's to apply, so it restarts the watch;
    // a name is filtered here at once.
    const sel = isLabelSelector(this.search) ? this.search : '';
    if (sel !== this.labelSelector) {
      this.searchTimer = setTimeout(() => this.startWatch(), 300);
    } else {
      this.applyFilter();
    }
  }

  kindMatches(r, text) {
    if (!text) return true;
    const t = text.toLowerCase();
    return r.kind.toLowerCase().includes(t) || r.resource.includes(t) || r.group.includes(t)
      || (r.shortNames || []).some((s) => s === t);
  }

  renderKinds() {
    if (!this.all) return;
    const text = this.kindFilter || (this.selected ? '' : this.search);
    const groups = new Map();
    for (const r of this.all) {
      if (!this.kindMatches(r, text)) continue;
      if (!groups.has(r.group)) groups.set(r.group, []);
      groups.get(r.group).push(r);
    }
    // The core group first, then the built-in groups (no dot, or k8s.io),
    // then everyone else's, each alphabetically.
    const rank = (g) => (g === '' ? 0 : (!g.includes('.') || g.endsWith('.k8s.io')) ? 1 : 2);
    const names = [...groups.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    clear(this.kindsNav);
    if (!names.length) {
      this.kindsNav.appendChild(h('p', { class: 'muted' }, 'No kind matches.'));
      return;
    }
    for (const g of names) {
      const rs = groups.get(g).sort((a, b) => a.kind.localeCompare(b.kind));
      this.kindsNav.appendChild(h('div', { class: 'kind-group', 'data-group': g || 'core' },
        h('h3', null, groupLabel(g)),
        h('ul', null, rs.map((r) => {
          const current = this.selected === r;
          return h('li', null, h('a', {
            href: routeOf(r), 'data-kind': `${r.group || 'core'}/${r.resource}`,
            'aria-current': current ? 'page' : null, class: current ? 'current' : null,
            title: `${r.resource}${r.group ? '.' + r.group : ''} (${r.version}, ${r.namespaced ? 'namespaced' : 'cluster-scoped'})`,
          }, r.kind || r.resource));
        }))));
    }
  }

  async renderMain() {
    clear(this.main);
    const r = this.selected;
    const ns = r && r.namespaced ? this.ctx.namespace : '';
    this.actions = h('div', { class: 'actions' });
    const title = r
      ? h('h2', { id: 'resources-title' }, r.kind, ' ', h('small', { class: 'muted' }, `${r.resource}${r.group ? '.' + r.group : ''}/${r.version}`))
      : h('h2', { id: 'resources-title' }, 'Resources');
    this.main.append(h('header', { class: 'view-header' }, title, this.actions));
    this.renderCreateButton(r);
    if (!r) {
      const p = this.ctx.params || [];
      this.main.appendChild(h('p', { class: 'muted' }, p.length === 3
        ? `The server does not serve ${p[2]} in ${p[0]}/${p[1]}.`
        : 'Choose a kind to list its objects. The search box filters the kinds, then the objects (by name, or by label with a selector such as app=web).'));
      markUpdated(this.root);
      return;
    }
    this.main.appendChild(schemaDetails(r));
    // kubectl get -o wide: the columns of priority above 0 as well.
    const wide = h('input', {
      type: 'checkbox', id: 'wide-columns', 'data-toggle': 'wide', checked: !!this.wide,
      onchange: () => { this.wide = wide.checked; if (this.columnDefs) this.setColumns(this.columnDefs, r, ns); },
    });
    this.main.appendChild(h('div', { class: 'yaml-options' }, wide, h('label', { for: 'wide-columns' }, ' Wide columns (kubectl get -o wide)')));
    this.status = h('p', { class: 'muted', 'data-status': '', 'aria-live': 'polite' }, 'Loading…');
    this.tableHost = h('div', { class: 'table-host' });
    this.main.append(this.status, this.tableHost);
    this.columnsKey = '';
    this.startWatch(ns);
  }

  async renderCreateButton(r) {
    // Create applies whatever is pasted, so it is offered to a user who can
    // create the chosen kind, or with no kind chosen, any of the common ones.
    const ns = this.ctx.namespace || 'default';
    const checks = r
      ? [canI('create', { group: r.group, resource: r.resource, namespace: r.namespaced ? ns : '' })]
      : [['', 'configmaps'], ['apps', 'deployments'], ['', 'services'], ['', 'secrets']]
        .map(([group, resource]) => canI('create', { group, resource, namespace: ns }));
    const ok = (await Promise.all(checks)).some(Boolean);
    if (!ok || this.stopped || !this.actions.isConnected) return;
    this.actions.appendChild(h('button', {
      type: 'button', class: 'btn primary', 'data-action': 'create', onclick: () => this.createDialog(),
    }, 'Create'));
  }

  // The objects' list: the server's Table, listed in pages and then
  // watched, so every change reaches the screen without a reload.
  startWatch() {
    if (this.watch) this.watch.stop();
    const r = this.selected;
    if (!r) return;
    const ns = r.namespaced ? this.ctx.namespace : '';
    this.labelSelector = isLabelSelector(this.search) ? this.search : '';
    const path = resourcePath({ group: r.group, version: r.version, resource: r.resource, namespace: ns });
    this.watch = watchTable(path, {
      query: { labelSelector: this.labelSelector || undefined },
      canWatch: r.verbs.includes('watch'),
      onColumns: (cols) => this.setColumns(cols, r, ns),
      onRows: (rows) => {
        if (!this.table) return;
        this.status.removeAttribute('role');
        this.rows = rows;
        this.table.setItems(rows);
        this.status.textContent = this.labelSelector ? `Selector: ${this.labelSelector}` : '';
        markUpdated(this.root);
      },
      onError: (e) => {
        this.status.textContent = e.message;
        this.status.setAttribute('role', 'alert');
      },
    });
    if (this.table) this.applyFilter();
  }

  setColumns(defs, r, ns) {
    // Priority 0 columns are kubectl's default ones; the rest are -o wide.
    this.columnDefs = defs;
    const shown = defs.map((d, i) => ({ d, i })).filter(({ d }) => this.wide || !d.priority);
    const key = shown.map(({ d }) => d.name).join('|') + (ns ? '' : '|ns');
    if (key === this.columnsKey) return;
    this.columnsKey = key;
    const columns = [];
    if (r.namespaced && !ns) {
      columns.push({ title: 'Namespace', value: (row) => row.namespace, width: 'minmax(8em, 1fr)' });
    }
    for (const { d, i } of shown) {
      const col = { title: d.name, value: (row) => cellText(row.cells[i]) };
      if (d.name === 'Age') {
        // The server's age is as old as the list; count it from the
        // object's creation so it keeps time. (Other date columns, a
        // custom resource's, are printed as the server wrote them: the
        // row carries only the creation time.)
        col.value = (row) => (row.created ? age(row.created) : cellText(row.cells[i]));
        col.sort = (row) => -(Date.parse(row.created) || 0);
        col.width = '6em';
      } else if (d.type === 'integer' || d.type === 'number') {
        col.sort = (row) => Number(row.cells[i]) || 0;
        col.width = 'minmax(5em, auto)';
      } else if (d.format === 'name' || d.name === 'Name') {
        col.width = 'minmax(12em, 2fr)';
      }
      columns.push(col);
    }
    this.table = table({
      columns,
      key: (row) => row.key,
      onOpen: (row) => this.ctx.navigate(routeOf(r, row.namespace, row.name)),
      empty: ns ? `No ${r.resource} in namespace ${ns}.` : `No ${r.resource}.`,
      label: `${r.kind} objects`,
    });
    clear(this.tableHost).appendChild(this.table.el);
    // Switching to or from the wide columns keeps the rows already listed.
    if (this.rows) this.table.setItems(this.rows);
    this.applyFilter();
  }

  applyFilter() {
    if (!this.table) return;
    const text = this.labelSelector ? '' : this.search.toLowerCase();
    this.table.setFilter(text ? (row) => row.name.toLowerCase().includes(text) || row.namespace.includes(text) : null);
  }

  // The create dialog: pasted YAML (one or more documents, or JSON) applied
  // with server-side apply, each document to the path discovery gives its
  // kind. The dialog stays open on an error so the text can be fixed.
  createDialog() {
    clearError();
    const err = h('p', { class: 'error', 'data-error': '', role: 'alert', hidden: true });
    const ta = h('textarea', {
      id: 'create-yaml', name: 'yaml', 'data-yaml': '', rows: 18, spellcheck: false, class: 'code',
      placeholder: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: example\ndata:\n  key: value',
    });
    const nsNote = this.ctx.namespace
      ? `Objects without a namespace go to ${this.ctx.namespace}.`
      : 'Objects without a namespace go to default.';
    const submit = h('button', { type: 'submit', class: 'btn primary', 'data-confirm': '' }, 'Create');
    const cancel = h('button', { type: 'button', class: 'btn', 'data-cancel': '', onclick: () => close() }, 'Cancel');
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      h('div', { class: 'field' },
        h('label', { for: 'create-yaml' }, 'YAML or JSON'), ta,
        h('small', { class: 'help' }, `Applied with server-side apply (field manager orca-console). ${nsNote}`)),
      err,
      h('div', { class: 'dialog-buttons' }, cancel, submit));
    const dlg = h('dialog', { 'data-dialog': 'create', class: 'dialog dialog-wide', 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, 'Create from YAML'), form);
    const close = () => { dlg.close(); dlg.remove(); };
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); close(); });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      submit.disabled = true;
      err.hidden = true;
      try {
        const done = await this.createFrom(ta.value);
        clearError();
        close();
        toast(done.join('\n'), 'info');
        // One object created: open it.
        if (done.length === 1 && this.lastCreated) this.ctx.navigate(this.lastCreated);
      } catch (x) {
        err.textContent = x.message;
        err.hidden = false;
        showError(x);
      } finally {
        submit.disabled = false;
      }
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    ta.focus();
  }

  // createFrom applies each document in turn and returns kubectl's lines
  // ("configmap/demo serverside-applied"); it stops at the first failure,
  // naming the document, as kubectl apply reports per object.
  async createFrom(text) {
    const docs = documents(text);
    if (!docs.length) throw new Error('Paste the YAML of at least one object.');
    const all = this.all || (await discovery());
    const out = [];
    this.lastCreated = '';
    for (const [i, doc] of docs.entries()) {
      const id = identity(doc);
      const where = docs.length > 1 ? `document ${i + 1}: ` : '';
      if (!id.apiVersion || !id.kind) throw new Error(`${where}apiVersion and kind are required`);
      if (!id.name) {
        throw new Error(`${where}metadata.name is required: server-side apply cannot use generateName`);
      }
      const { group, version } = splitAPIVersion(id.apiVersion);
      const r = all.find((x) => x.group === group && x.version === version && x.kind === id.kind)
        || all.find((x) => x.group === group && x.kind === id.kind)
        || (await lookupKind(group, version, id.kind));
      if (!r) {
        throw new Error(`${where}no matches for kind "${id.kind}" in version "${id.apiVersion}"`);
      }
      const namespace = r.namespaced ? (id.namespace || this.ctx.namespace || 'default') : '';
      const path = resourcePath({ group, version, resource: r.resource, namespace, name: id.name });
      try {
        await apply(path, doc, {});
      } catch (e) {
        // Say which documents did go in before this one failed, as kubectl
        // apply prints each object's line before the error.
        if (e instanceof ApiError && where) e.message = [...out, where + e.message].join('\n');
        throw e;
      }
      out.push(`${(r.kind || r.resource).toLowerCase()}${r.group ? '.' + r.group : ''}/${id.name} serverside-applied`);
      this.lastCreated = routeOf({ ...r, version }, namespace, id.name);
    }
    return out;
  }
}

// The kind's schema, as kubectl explain shows it: the description and the
// fields of the object and of its spec, read from the server's OpenAPI v3
// document for the group-version. That document is large (a megabyte for
// the core group), so it is fetched only when the reader opens the details,
// and once per page.
const openAPIDocs = new Map();

function openAPIDoc(group, version) {
  const key = group ? `apis/${group}/${version}` : `api/${version}`;
  if (!openAPIDocs.has(key)) {
    const p = request('GET', '/openapi/v3').then((index) => {
      const ref = index.paths && index.paths[key];
      if (!ref) throw new Error(`the server publishes no OpenAPI schema for ${key}`);
      return request('GET', ref.serverRelativeURL);
    });
    p.catch(() => openAPIDocs.delete(key));
    openAPIDocs.set(key, p);
  }
  return openAPIDocs.get(key);
}

// schemaOf finds the kind's schema by its x-kubernetes-group-version-kind
// and resolves a $ref (direct, or wrapped in allOf as v3 writes them).
export function schemaOf(doc, group, version, kind) {
  const schemas = (doc.components && doc.components.schemas) || {};
  for (const s of Object.values(schemas)) {
    const gvks = s['x-kubernetes-group-version-kind'] || [];
    if (gvks.some((g) => (g.group || '') === group && g.version === version && g.kind === kind)) return s;
  }
  return null;
}

function deref(doc, s) {
  if (!s) return s;
  const ref = s.$ref || (s.allOf && s.allOf.length === 1 && s.allOf[0].$ref);
  if (!ref) return s;
  const name = ref.replace('#/components/schemas/', '');
  return { ...(doc.components.schemas[name] || {}), description: s.description || (doc.components.schemas[name] || {}).description };
}

function typeOf(doc, s) {
  const t = deref(doc, s) || {};
  if (t.type === 'array') return `[]${typeOf(doc, t.items)}`;
  if (t.type === 'object' && t.additionalProperties) return `map[string]${typeOf(doc, t.additionalProperties)}`;
  if (t.type === 'object' || (!t.type && t.properties)) return 'Object';
  if (t.type) return t.type;
  return t['x-kubernetes-int-or-string'] ? 'IntOrString' : 'Object';
}

function fieldsList(doc, s) {
  const props = (s && s.properties) || {};
  const required = new Set((s && s.required) || []);
  const names = Object.keys(props).sort();
  if (!names.length) return h('p', { class: 'muted' }, '<no fields>');
  return h('dl', { class: 'kv schema-fields' }, names.map((n) => {
    const f = deref(doc, props[n]) || {};
    const desc = (props[n].description || f.description || '').split('\n')[0];
    return [
      h('dt', null, h('code', null, n), ' ', h('small', { class: 'muted' }, `<${typeOf(doc, props[n])}>${required.has(n) ? ' -required-' : ''}`)),
      h('dd', null, desc),
    ];
  }));
}

function schemaDetails(r) {
  const body = h('div', { class: 'schema-body' }, h('p', { class: 'muted' }, 'Loading the schema…'));
  const details = h('details', { class: 'schema', 'data-schema': '' },
    h('summary', null, `About ${r.kind} (fields, from the OpenAPI schema)`), body);
  let loaded = false;
  details.addEventListener('toggle', async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      const doc = await openAPIDoc(r.group, r.version);
      const s = schemaOf(doc, r.group, r.version, r.kind);
      if (!s) throw new Error(`no schema for ${r.kind} in ${r.group || 'core'}/${r.version}`);
      const spec = s.properties && s.properties.spec ? deref(doc, s.properties.spec) : null;
      clear(body).append(
        h('p', null, s.description || ''),
        h('h4', null, 'Fields'), fieldsList(doc, s),
        spec && spec.properties ? [h('h4', null, 'spec'), fieldsList(doc, spec)] : null);
    } catch (e) {
      loaded = false;
      clear(body).appendChild(h('p', { class: 'error', role: 'alert' }, e.message));
    }
  });
  return details;
}

// lookupKind asks the group-version itself for a kind (or a resource
// name) discovery did not know when the page loaded (discovery is cached for the page's life), so
// a custom resource can be created right after its definition.
export async function lookupKind(group, version, kind, resource) {
  try {
    const list = await request('GET', group ? `/apis/${group}/${version}` : `/api/${version}`);
    const x = (list.resources || []).find((res) => (kind ? res.kind === kind : true) && (resource ? res.name === resource : true) && !res.name.includes('/'));
    return x ? { group, version, resource: x.name, kind: x.kind, namespaced: !!x.namespaced, verbs: x.verbs || [] } : null;
  } catch {
    return null;
  }
}

// cellText prints a Table cell as kubectl does: strings as the server
// wrote them (it writes <none> itself where kubectl shows it), a missing
// value as <none>, objects as JSON.
export function cellText(v) {
  if (v === null || v === undefined) return '<none>';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// rowFromTable turns a Table row into the table's item: the cells, and
// from the row's PartialObjectMetadata only what the list needs (the
// rest, labels and managedFields among it, is dropped to keep 150,000
// rows small).
function rowFromTable(row) {
  const m = (row.object && row.object.metadata) || {};
  const name = m.name || String(row.cells[0] ?? '');
  const namespace = m.namespace || '';
  return { key: namespace ? `${namespace}/${name}` : name, name, namespace, created: m.creationTimestamp || '', cells: row.cells };
}

// rowFromObject does the same for a server that answered with the objects
// themselves (no Table): NAME and AGE, as kubectl prints such kinds.
function rowFromObject(o) {
  const m = o.metadata || {};
  const namespace = m.namespace || '';
  return { key: namespace ? `${namespace}/${m.name}` : m.name, name: m.name, namespace, created: m.creationTimestamp || '', cells: [m.name, ''] };
}

const plainColumns = [
  { name: 'Name', type: 'string', format: 'name' },
  { name: 'Age', type: 'date' },
];

function isTable(body) {
  return body && body.kind === 'Table';
}

// watchTable lists a collection as a Table (in pages) and then watches it
// as a Table, calling onColumns(definitions) when the columns are known
// and onRows(rows) — every current row, sorted by key — at most once a
// frame. api.js's watchList keeps whole objects and cannot ask for a
// Table, so this does the same dance for Tables: resume a dropped stream
// from the last resourceVersion, list again on 410 Gone.
export function watchTable(path, { query = {}, onColumns, onRows, onError, canWatch = true }) {
  const rows = new Map();
  let keys = [];
  let rv = '';
  let stopped = false;
  let ctrl = null;
  let frame = 0;
  let timer = null;
  let backoff = 500;

  const flush = () => {
    frame = 0;
    if (stopped) return;
    onRows(keys.map((k) => rows.get(k)));
  };
  const changed = () => {
    if (frame || stopped) return;
    // A hidden tab gets no frames; the timer keeps the list current anyway.
    frame = requestAnimationFrame(flush);
    setTimeout(() => { if (frame) { cancelAnimationFrame(frame); flush(); } }, 250);
  };
  const search = (k) => {
    let lo = 0, hi = keys.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (keys[mid] < k) lo = mid + 1; else hi = mid; }
    return lo;
  };
  const put = (row) => {
    if (!rows.has(row.key)) keys.splice(search(row.key), 0, row.key);
    rows.set(row.key, row);
  };
  const remove = (row) => {
    if (!rows.delete(row.key)) return;
    const i = search(row.key);
    if (keys[i] === row.key) keys.splice(i, 1);
  };

  const list = async () => {
    const fresh = new Map();
    let cont = '';
    let listRV = '';
    let columns = null;
    let first = rows.size === 0;
    do {
      const body = await request('GET', path, { query: { ...query, limit: LIST_LIMIT, continue: cont || undefined }, accept: TABLE_ACCEPT });
      if (stopped) return;
      if (isTable(body)) {
        if (!columns && body.columnDefinitions) columns = body.columnDefinitions;
        for (const r of body.rows || []) { const row = rowFromTable(r); fresh.set(row.key, row); }
      } else {
        columns = plainColumns;
        for (const o of body.items || []) { const row = rowFromObject(o); fresh.set(row.key, row); }
      }
      cont = (body.metadata && body.metadata.continue) || '';
      if (!listRV) listRV = (body.metadata && body.metadata.resourceVersion) || '';
      if (cont && first) {
        // A long list shows its first page while the rest comes.
        first = false;
        if (columns && onColumns) onColumns(columns);
        onRows([...fresh.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
      }
    } while (cont);
    if (columns && onColumns) onColumns(columns);
    rows.clear();
    for (const [k, row] of fresh) rows.set(k, row);
    keys = [...fresh.keys()].sort();
    rv = listRV;
    changed();
  };

  const watch = async () => {
    ctrl = new AbortController();
    const u = new URL(path, location.origin);
    for (const [k, v] of Object.entries({ ...query, watch: 1, resourceVersion: rv, allowWatchBookmarks: true })) {
      if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    }
    const res = await fetch(u.pathname + u.search, {
      headers: { Accept: TABLE_ACCEPT, Authorization: `Bearer ${getToken()}` },
      signal: ctrl.signal, cache: 'no-store',
    });
    if (!res.ok) {
      // Let request() turn the refusal into an ApiError (and a 401 into
      // signing out) by asking once more the ordinary way.
      await request('GET', path, { query: { ...query, limit: 1 }, accept: TABLE_ACCEPT });
      throw new ApiError(`watch refused: ${res.status} ${res.statusText}`, res.status, res.statusText);
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const ev = JSON.parse(line);
        const o = ev.object || {};
        if (ev.type === 'ERROR') {
          if (o.code === 410) return 'gone';
          throw new ApiError(o.message || 'watch error', o.code || 500, o.reason, o.details);
        }
        backoff = 500;
        const evRV = o.metadata && o.metadata.resourceVersion;
        if (evRV) rv = evRV;
        if (ev.type === 'BOOKMARK') continue;
        const got = isTable(o) ? (o.rows || []).map(rowFromTable) : [rowFromObject(o)];
        for (const row of got) {
          if (ev.type === 'DELETED') remove(row); else put(row);
        }
        changed();
      }
    }
  };

  const run = async () => {
    while (!stopped) {
      try {
        if (!rv) await list();
        if (stopped) return;
        if (!canWatch) {
          // A kind served without watch (componentstatuses) is listed
          // again every ten seconds instead.
          await new Promise((resolve) => { timer = setTimeout(resolve, 10000); });
          rv = '';
          continue;
        }
        const began = Date.now();
        const how = await watch();
        if (how === 'gone') rv = '';
        else if (Date.now() - began < 1000) await sleep();
      } catch (e) {
        if (stopped || e.name === 'AbortError') return;
        if (e instanceof ApiError && e.status === 401) return;
        if (e instanceof ApiError && e.status === 410) rv = '';
        if (onError) onError(e);
        await sleep();
      }
    }
  };
  const sleep = () => new Promise((resolve) => {
    timer = setTimeout(resolve, backoff);
    backoff = Math.min(backoff * 2, 30000);
  });

  run();
  return {
    stop() {
      stopped = true;
      if (ctrl) ctrl.abort();
      if (frame) cancelAnimationFrame(frame);
      clearTimeout(timer);
    },
  };
}
