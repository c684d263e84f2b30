// One object of any kind (#/resources/GROUP/VERSION/RESOURCE[/NS]/NAME):
// its YAML as the server prints it, kept live by a watch; the YAML editor,
// whose changes are reviewed as a diff against what a dry-run
// server-side apply would store before they are applied for real (with
// "Force apply" when another field manager owns a changed field); delete
// with a propagation policy; and the object's events.

import { h, clear, age, markUpdated, showError, clearError, toast, formDialog } from '../lib/dom.js';
import { discovery, canI, request, getYAML, apply, del, resourcePath, watchList, ApiError } from '../lib/api.js';
import { diffLines, renderDiff, stripManagedFields, forEditing, unchanged } from '../lib/yaml.js';
import { findResource, routeOf, groupLabel, ensureStyles, lookupKind } from './resources.js';

export async function mount(outlet, ctx) {
  const p = ctx.params || [];
  // Three parts name a kind, not an object: that list is resources.js's.
  if (p.length < 4) {
    const m = await import('./resources.js');
    return m.mount(outlet, ctx);
  }
  const view = new ResourceView(outlet, ctx);
  return () => view.unmount();
}

// dryRunYAML asks the server what it would store if yamlText were applied:
// a server-side apply with dryRun=All, answered as YAML so it diffs
// line for line against the live object's YAML.
export async function dryRunYAML(path, yamlText, force) {
  try {
    return await request('PATCH', path, {
      query: { fieldManager: 'orca-console', dryRun: 'All', force: force || undefined },
      body: yamlText,
      contentType: 'application/apply-patch+yaml',
      accept: 'application/yaml',
    });
  } catch (e) {
    if (!(e instanceof ApiError) || e.status === 0) throw e;
    // A refusal asked for in YAML comes as a YAML Status, which the client
    // cannot read; asking again in JSON gives the message and its causes.
    await apply(path, yamlText, { force, dryRun: true });
    throw e;
  }
}

// comparable drops what changes on every write and says nothing about the
// edit (managedFields carry times; a dry run may move the
// resourceVersion), so the diff shows the user's change and its effects.
function comparable(yamlText) {
  return stripManagedFields(yamlText).split('\n')
    .filter((l) => !/^ {2}resourceVersion: /.test(l)).join('\n');
}

class ResourceView {
  constructor(outlet, ctx) {
    ensureStyles();
    this.ctx = ctx;
    const p = ctx.params.map((s) => decodeURIComponent(s));
    this.route = { group: p[0], version: p[1], resource: p[2] };
    if (p.length >= 5) { this.namespace = p[3]; this.name = p[4]; } else { this.namespace = ''; this.name = p[3]; }
    this.showManaged = false;
    this.editing = false;
    this.yaml = '';
    this.stopped = false;
    this.root = h('section', { 'data-view': 'resource', class: 'view resource-view', 'aria-labelledby': 'resource-title' });
    clear(outlet).appendChild(this.root);
    clearError();
    this.start();
  }

  unmount() {
    this.stopped = true;
    if (this.objWatch) this.objWatch.stop();
    if (this.evWatch) this.evWatch.stop();
    clearTimeout(this.reviewTimer);
    clearTimeout(this.refetchTimer);
  }

  async start() {
    const { group, version, resource } = this.route;
    let all;
    try {
      all = await discovery();
    } catch (e) {
      this.root.appendChild(h('p', { class: 'error', role: 'alert' }, e.message));
      return;
    }
    if (this.stopped) return;
    const g = group === 'core' ? '' : group;
    const found = findResource(all, group, version, resource) || (await lookupKind(g, version, '', resource));
    if (this.stopped) return;
    // A route may name a version discovery does not prefer; the object is
    // still reachable there.
    this.r = found ? { ...found, version } : {
      group: g, version, resource, kind: '', namespaced: !!this.namespace, verbs: [],
    };
    this.path = resourcePath({ group: this.r.group, version, resource, namespace: this.namespace, name: this.name });
    this.renderFrame();
    this.renderActions();
    this.watchObject();
    this.watchEvents();
  }

  renderFrame() {
    const r = this.r;
    this.actions = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'Actions' });
    this.managedToggle = h('input', {
      type: 'checkbox', id: 'show-managed', 'data-toggle': 'managed-fields',
      onchange: () => { this.showManaged = this.managedToggle.checked; this.renderYAML(); },
    });
    this.yamlPre = h('pre', { class: 'code yaml', 'data-yaml-view': '', tabindex: 0, 'aria-label': 'YAML' });
    this.editor = h('div', { class: 'editor', hidden: true });
    this.notice = h('p', { class: 'notice', role: 'status', hidden: true });
    this.eventsBody = h('tbody');
    this.eventsNote = h('p', { class: 'muted' }, 'Loading events…');
    const listLink = routeOf(r);
    this.root.append(
      h('nav', { class: 'breadcrumbs', 'aria-label': 'Breadcrumbs' },
        h('a', { href: '#/resources' }, 'Resources'), ' › ',
        h('a', { href: listLink }, `${r.kind || r.resource} (${groupLabel(r.group)})`),
        this.namespace ? [' › ', h('span', null, this.namespace)] : null),
      h('header', { class: 'view-header' },
        h('h2', { id: 'resource-title' }, `${r.kind || r.resource} `, h('span', { class: 'name' }, this.name)),
        this.actions),
      this.owners = h('p', { class: 'owners muted', 'data-owners': '', hidden: true }),
      this.notice,
      h('div', { class: 'yaml-options' },
        this.managedToggle,
        h('label', { for: 'show-managed' }, ' Show managedFields')),
      this.yamlPre,
      this.editor,
      h('section', { class: 'events', 'aria-labelledby': 'events-title' },
        h('h3', { id: 'events-title' }, 'Events'),
        this.eventsNote,
        this.eventsTable = h('table', { class: 'simple', 'data-events': '', hidden: true },
          h('thead', null, h('tr', null, ['Type', 'Reason', 'Age', 'From', 'Message'].map((t) => h('th', { scope: 'col' }, t)))),
          this.eventsBody)));
  }

  async renderActions() {
    const r = this.r;
    const attrs = { group: r.group, resource: r.resource, namespace: this.namespace, name: this.name };
    const [canPatch, canDelete] = await Promise.all([
      r.verbs.length && !r.verbs.includes('patch') ? false : canI('patch', attrs),
      r.verbs.length && !r.verbs.includes('delete') ? false : canI('delete', attrs),
    ]);
    if (this.stopped) return;
    this.canPatch = canPatch;
    clear(this.actions);
    if (canPatch) {
      this.editBtn = h('button', { type: 'button', class: 'btn', 'data-action': 'edit', onclick: () => this.startEdit() }, 'Edit');
      this.actions.appendChild(this.editBtn);
    }
    if (canDelete) {
      this.actions.appendChild(h('button', { type: 'button', class: 'btn danger', 'data-action': 'delete', onclick: () => this.remove() }, 'Delete'));
    }
  }

  // The object's YAML is fetched as the server prints it whenever the
  // watch sees the object change (at most every 200ms), so the page shows
  // exactly what kubectl get -o yaml would.
  watchObject() {
    const r = this.r;
    const collection = resourcePath({ group: r.group, version: r.version, resource: r.resource, namespace: this.namespace });
    this.objWatch = watchList(collection, {
      query: { fieldSelector: `metadata.name=${this.name}` },
      onUpdate: (items) => {
        if (!items.length) { this.gone(); return; }
        if (this.deleted) { this.deleted = false; this.showNotice(''); this.actions.hidden = false; }
        this.renderOwners(items[0]);
        const rv = items[0].metadata && items[0].metadata.resourceVersion;
        if (rv === this.rv) return;
        this.rv = rv;
        // A throttle, not a debounce: an object that changes all the time
        // (a Lease, a busy Node) must still be shown.
        if (this.refetchTimer) return;
        this.refetchTimer = setTimeout(() => { this.refetchTimer = null; this.fetchYAML(); }, this.yaml ? 200 : 0);
      },
      onError: (e) => this.showNotice(e.message),
    });
  }

  async fetchYAML() {
    // Answers can overtake each other; only the latest request's counts.
    const seq = (this.fetchSeq = (this.fetchSeq || 0) + 1);
    try {
      const text = await getYAML(this.path);
      if (this.stopped || seq !== this.fetchSeq) return;
      const changedUnderEdit = this.editing && this.yaml && comparable(text) !== comparable(this.yaml);
      this.yaml = text;
      this.renderYAML();
      if (changedUnderEdit) {
        this.showNotice('The object changed since you started editing; the diff is against its current state.');
        this.scheduleReview(0);
      }
      markUpdated(this.root);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) this.gone();
      else this.showNotice(e.message);
    }
  }

  // renderOwners links the objects that own this one (a Pod's ReplicaSet,
  // a ReplicaSet's Deployment), found through discovery by their kind.
  async renderOwners(obj) {
    const refs = (obj.metadata && obj.metadata.ownerReferences) || [];
    const sig = refs.map((o) => o.uid).join(',');
    if (sig === this.ownersSig) return;
    this.ownersSig = sig;
    if (!refs.length) { this.owners.hidden = true; return; }
    const all = await discovery();
    clear(this.owners).append('Owned by ');
    refs.forEach((o, i) => {
      const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
      const r = all.find((x) => x.group === group && x.kind === o.kind);
      const label = `${o.kind} ${o.name}${o.controller ? ' (controller)' : ''}`;
      if (i) this.owners.append(', ');
      this.owners.append(r
        ? h('a', { href: routeOf({ ...r, version }, r.namespaced ? this.namespace : '', o.name) }, label)
        : label);
    });
    this.owners.hidden = false;
  }

  gone() {
    if (this.deleted) return;
    this.deleted = true;
    // Nothing is left to edit or delete.
    this.actions.hidden = true;
    this.showNotice(`${this.r.kind || this.r.resource} "${this.name}" does not exist (any more).`);
    markUpdated(this.root);
  }

  showNotice(text) {
    this.notice.textContent = text;
    this.notice.hidden = !text;
  }

  renderYAML() {
    this.yamlPre.textContent = this.showManaged ? this.yaml : stripManagedFields(this.yaml);
  }

  // setError shows an action's failure in the page's one [data-error] bar
  // (and a toast), where every view puts them.
  setError(e) {
    if (!e) clearError();
    else showError(e);
  }

  // Editing starts from the live YAML without what apply refuses or
  // ignores (managedFields, status, resourceVersion).
  async startEdit() {
    if (this.editing) return;
    // Pressed before the first YAML arrived: fetch it rather than edit nothing.
    if (!this.yaml) await this.fetchYAML();
    if (!this.yaml || this.editing || this.stopped) return;
    this.editing = true;
    this.setError(null);
    this.showNotice('');
    this.reviewed = null;
    this.textarea = h('textarea', {
      id: 'yaml-editor', 'data-yaml': '', class: 'code', spellcheck: false, 'aria-describedby': 'yaml-editor-help',
      rows: Math.min(40, Math.max(12, forEditing(this.yaml).split('\n').length + 2)),
      value: forEditing(this.yaml),
      oninput: () => this.scheduleReview(600),
      onkeydown: (e) => {
        // Tab indents (two spaces, YAML's) rather than leaving the editor;
        // Escape then Tab still leaves it, so keyboard users are not trapped.
        if (e.key === 'Escape') { this.tabLeaves = true; return; }
        if (e.key === 'Tab' && !e.shiftKey && !this.tabLeaves) {
          e.preventDefault();
          const t = this.textarea;
          t.setRangeText('  ', t.selectionStart, t.selectionEnd, 'end');
          this.scheduleReview(600);
        }
        this.tabLeaves = false;
      },
    });
    this.diffEl = h('div', { class: 'diff', 'data-diff': '', 'aria-label': 'Changes to apply', 'aria-live': 'polite', hidden: true });
    this.applyBtn = h('button', { type: 'button', class: 'btn primary', 'data-action': 'apply', onclick: () => this.applyEdit(false) }, 'Apply');
    this.forceBtn = h('button', {
      type: 'button', class: 'btn danger', 'data-action': 'force-apply', hidden: true,
      'aria-describedby': 'force-help', onclick: () => this.applyEdit(true),
    }, 'Force apply');
    this.forceHelp = h('small', { id: 'force-help', class: 'help', hidden: true },
      'Another field manager owns a field this edit changes; Force apply takes the field over (the diff shows the forced result).');
    clear(this.editor).append(
      h('label', { for: 'yaml-editor' }, 'Edit the YAML; the changes are shown below before they are applied.'),
      h('small', { class: 'help', id: 'yaml-editor-help' }, 'Tab indents by two spaces; Escape, then Tab, leaves the editor.'),
      this.textarea,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', 'data-action': 'review', onclick: () => this.review() }, 'Review changes'),
        this.applyBtn, this.forceBtn,
        h('button', { type: 'button', class: 'btn', 'data-action': 'cancel-edit', onclick: () => this.stopEdit() }, 'Cancel')),
      this.forceHelp,
      h('h3', null, 'Changes'),
      this.diffEl);
    this.editor.hidden = false;
    this.yamlPre.hidden = true;
    if (this.editBtn) this.editBtn.hidden = true;
    this.textarea.focus();
  }

  stopEdit() {
    this.editing = false;
    this.editor.hidden = true;
    clear(this.editor);
    this.yamlPre.hidden = false;
    if (this.editBtn) { this.editBtn.hidden = false; this.editBtn.focus(); }
    clearTimeout(this.reviewTimer);
  }

  scheduleReview(ms) {
    clearTimeout(this.reviewTimer);
    this.reviewTimer = setTimeout(() => this.review(), ms);
  }

  // review runs the edit as a dry-run apply and shows the diff between the
  // live object and what the server would store. A conflict (another field
  // manager owns a changed field) is shown with the server's message, and
  // the diff of a forced apply, with "Force apply" in place of "Apply".
  async review() {
    if (!this.editing) return null;
    clearTimeout(this.reviewTimer);
    const text = this.textarea.value;
    const seq = (this.reviewSeq = (this.reviewSeq || 0) + 1);
    let result;
    let conflict = null;
    try {
      result = await dryRunYAML(this.path, text, false);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409 && e.reason === 'Conflict' && isApplyConflict(e))) {
        if (seq === this.reviewSeq) this.showReviewError(e, text);
        return null;
      }
      conflict = e;
      try {
        result = await dryRunYAML(this.path, text, true);
      } catch (e2) {
        if (seq === this.reviewSeq) this.showReviewError(e2, text);
        return null;
      }
    }
    if (seq !== this.reviewSeq || !this.editing) return null;
    const ops = diffLines(comparable(this.yaml), comparable(result));
    this.diffEl.hidden = false;
    renderDiff(this.diffEl, ops);
    this.reviewed = { text, conflict, empty: unchanged(ops) };
    this.setError(conflict);
    this.forceBtn.hidden = this.forceHelp.hidden = !conflict;
    this.applyBtn.hidden = !!conflict;
    markUpdated(this.root);
    return this.reviewed;
  }

  showReviewError(e, text) {
    this.reviewed = { text, error: e };
    this.diffEl.hidden = true;
    this.forceBtn.hidden = this.forceHelp.hidden = true;
    this.applyBtn.hidden = false;
    this.setError(e);
  }

  // applyEdit applies what the diff shows. Text changed since the last
  // review is reviewed first and not applied: only a change the user has
  // seen is sent.
  async applyEdit(force) {
    const text = this.textarea.value;
    if (!this.reviewed || this.reviewed.text !== text || this.reviewed.error) {
      const rv = await this.review();
      if (rv && !rv.conflict && !force) this.applyBtn.focus();
      if (rv && rv.conflict) this.forceBtn.focus();
      return;
    }
    if (this.reviewed.empty && !force) {
      toast('Nothing to apply: the server would store the object unchanged.', 'info');
      return;
    }
    this.applyBtn.disabled = this.forceBtn.disabled = true;
    try {
      await apply(this.path, text, { force });
      if (this.stopped) return;
      this.setError(null);
      toast(`${kindWord(this.r)}/${this.name} serverside-applied`, 'info');
      this.stopEdit();
      await this.fetchYAML();
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && isApplyConflict(e)) {
        // Someone took a field between the review and now.
        this.forceBtn.hidden = this.forceHelp.hidden = false;
        this.applyBtn.hidden = true;
        this.forceBtn.focus();
      }
      this.setError(e);
    } finally {
      if (this.applyBtn) this.applyBtn.disabled = this.forceBtn.disabled = false;
    }
  }

  async remove() {
    const r = this.r;
    const v = await formDialog({
      title: `Delete ${r.kind || r.resource} ${this.name}?`,
      name: 'delete',
      body: 'Dependents (objects this one owns) are handled by the propagation policy: Background deletes them after the object, Foreground before it, Orphan leaves them.',
      fields: [{
        name: 'propagationPolicy', label: 'Propagation policy', type: 'select', value: 'Background',
        options: ['Background', 'Foreground', 'Orphan'],
      }],
      confirmLabel: 'Delete',
    });
    if (!v) return;
    try {
      await del(this.path, { propagationPolicy: v.propagationPolicy });
      toast(`${kindWord(r)} "${this.name}" deleted`, 'info');
      this.ctx.navigate(routeOf(r));
    } catch (e) {
      this.setError(e);
    }
  }

  // Events about this object, found as kubectl describe finds them: by the
  // involved object's name, kind and namespace.
  watchEvents() {
    const r = this.r;
    const sel = [`involvedObject.name=${this.name}`];
    if (r.kind) sel.push(`involvedObject.kind=${r.kind}`);
    if (this.namespace) sel.push(`involvedObject.namespace=${this.namespace}`);
    this.evWatch = watchList(resourcePath({ version: 'v1', resource: 'events', namespace: this.namespace }), {
      query: { fieldSelector: sel.join(',') },
      onUpdate: (items) => {
        const evs = items.slice().sort((a, b) => lastSeen(a) - lastSeen(b));
        clear(this.eventsBody);
        this.eventsNote.textContent = evs.length ? '' : '<none>';
        this.eventsNote.hidden = evs.length > 0;
        this.eventsTable.hidden = evs.length === 0;
        for (const e of evs) {
          const count = e.count || (e.series && e.series.count) || 1;
          const when = e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp;
          this.eventsBody.appendChild(h('tr', { class: e.type === 'Warning' ? 'warning' : null },
            h('td', null, e.type || ''),
            h('td', null, e.reason || ''),
            h('td', null, count > 1 ? `${age(when)} (x${count})` : age(when)),
            h('td', null, (e.source && e.source.component) || e.reportingComponent || ''),
            h('td', null, e.message || '')));
        }
        markUpdated(this.root);
      },
      onError: (e) => { this.eventsNote.hidden = false; this.eventsNote.textContent = e.message; },
    });
  }
}

// kindWord names a kind as kubectl's messages do: "configmap", "deployment.apps".
function kindWord(r) {
  const k = (r.kind || r.resource).toLowerCase();
  return r.group ? `${k}.${r.group}` : k;
}

function lastSeen(e) {
  return Date.parse(e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp) || 0;
}

// isApplyConflict tells apply's field-manager conflict (which force
// resolves) from an optimistic-concurrency conflict (which it does not).
function isApplyConflict(e) {
  const causes = (e.details && e.details.causes) || [];
  return causes.some((c) => c.reason === 'FieldManagerConflict') || /conflict/i.test(e.message) && /manager/i.test(e.message);
}
