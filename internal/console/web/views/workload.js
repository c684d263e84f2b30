// The workload view (#/workloads/KIND/NS/NAME): one controller's status,
// conditions, rollout state and revision history, its pods (or a CronJob's
// jobs) and its events, all live, and the actions kubectl's rollout, scale,
// create job --from and delete commands offer, each shown only to a user
// the cluster's RBAC lets use it. Also the conditions and events panels the
// pod view shares.

import { watchList, canI, resourcePath, get, patch, create, del } from '../lib/api.js';
import { h, clear, age, markUpdated, showError, clearError, toast, confirmDialog, formDialog } from '../lib/dom.js';
import { table } from '../lib/table.js';
import { KINDS, kindPath, labelSelectorString, nameColumns, workloadHash, jobStatus, jobCompletions, jobDuration, ensureStyles } from './workloads.js';
import { podColumns, podHash } from './pods.js';

const REVISION = 'deployment.kubernetes.io/revision';
const CHANGE_CAUSE = 'kubernetes.io/change-cause';
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
const POD_TEMPLATE_HASH = 'pod-template-hash';

// Annotations `kubectl rollout undo` keeps from the Deployment rather than
// taking from the ReplicaSet (k8s.io/kubectl/pkg/polymorphichelpers/rollback.go).
const ANNOTATIONS_TO_SKIP = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);

export const OWNER_ROUTES = {
  Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets',
  Job: 'jobs', CronJob: 'cronjobs', ReplicaSet: 'replicasets',
};

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

function withoutHash(template) {
  const t = structuredClone(template || {});
  if (t.metadata && t.metadata.labels) {
    delete t.metadata.labels[POD_TEMPLATE_HASH];
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels;
  }
  return t;
}

// rfc3339 is Go's time.RFC3339, which kubectl writes into restartedAt.
function rfc3339(d) {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function controllerOf(obj) {
  return ((obj.metadata && obj.metadata.ownerReferences) || []).find((r) => r.controller);
}

function ownedBy(uid) {
  return (o) => ((o.metadata && o.metadata.ownerReferences) || []).some((r) => r.uid === uid && r.controller);
}

function imagesOf(template) {
  const spec = (template && template.spec) || {};
  return (spec.containers || []).map((c) => c.image).join(', ');
}

export function field(label, value) {
  if (value === undefined || value === null || value === '') return null;
  return [h('dt', null, label), h('dd', null, value)];
}

export function labelsText(m) {
  const keys = Object.keys(m || {}).sort();
  return keys.length ? keys.map((k) => `${k}=${m[k]}`).join(', ') : '<none>';
}

// conditionsTable lists status conditions as kubectl describe does, with
// the reason and message it leaves out of the short form.
export function conditionsTable(conditions) {
  if (!conditions || conditions.length === 0) return h('p', { class: 'empty' }, 'No conditions reported.');
  return h('table', { class: 'plain', 'data-conditions': '' },
    h('thead', null, h('tr', null, ['Type', 'Status', 'Reason', 'Message', 'Last transition'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, conditions.map((c) => h('tr', { 'data-condition': c.type },
      h('td', null, c.type),
      h('td', { class: c.status === 'True' ? 'ok-text' : c.status === 'False' ? 'bad-text' : 'warn-text' }, c.status),
      h('td', null, c.reason || ''),
      h('td', null, c.message || ''),
      h('td', null, c.lastTransitionTime ? `${age(c.lastTransitionTime)} ago` : '')))));
}

function eventTime(ev) {
  return ev.lastTimestamp || (ev.series && ev.series.lastObservedTime) || ev.eventTime || ev.metadata.creationTimestamp;
}

// eventsPanel is a live table of the events about one object, newest
// first, with kubectl's TYPE, REASON, AGE, FROM and MESSAGE. The server
// selects them by involvedObject fields, so a busy namespace costs nothing.
export function eventsPanel({ namespace, kind, name, onChange }) {
  const tbl = table({
    columns: [
      { title: 'TYPE', value: (e) => h('span', { class: e.type === 'Warning' ? 'bad-text' : '' }, e.type || ''), width: '6em' },
      { title: 'REASON', value: (e) => e.reason || '', width: 'minmax(8em, 1fr)' },
      {
        title: 'AGE',
        value: (e) => {
          const n = (e.series && e.series.count) || e.count || 1;
          return n > 1 ? `${age(eventTime(e))} (x${n} over ${age(e.firstTimestamp || e.metadata.creationTimestamp)})` : age(eventTime(e));
        },
        sort: (e) => -Date.parse(eventTime(e) || 0),
        width: 'minmax(6em, 1fr)',
      },
      {
        title: 'FROM',
        value: (e) => (e.source && e.source.component) || e.reportingComponent || '',
        width: 'minmax(8em, 1fr)',
      },
      { title: 'MESSAGE', value: (e) => h('span', { title: e.message || '' }, e.message || ''), width: 'minmax(16em, 4fr)' },
    ],
    key: (e) => e.metadata.name,
    empty: 'No events.',
    label: 'Events',
  });
  const w = watchList(resourcePath({ version: 'v1', resource: 'events', namespace }), {
    query: { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` },
    onUpdate: (items) => {
      const sorted = items.slice().sort((a, b) => Date.parse(eventTime(b) || 0) - Date.parse(eventTime(a) || 0));
      tbl.setItems(sorted);
      if (onChange) onChange(sorted);
    },
  });
  return { el: tbl.el, stop: () => w.stop(), refresh: () => tbl.refresh && tbl.refresh() };
}

// propagationChoice is the delete dialog's choice of what happens to the
// object's dependents, Background first and checked as kubectl defaults.
export function propagationChoice(what) {
  const choices = [
    ['Background', `Delete the ${what} now; the garbage collector deletes its dependents afterwards (kubectl's default, --cascade=background).`],
    ['Foreground', `Keep the ${what}, marked for deletion, until the garbage collector has deleted its dependents (--cascade=foreground).`],
    ['Orphan', `Delete the ${what} only; its dependents stay, without an owner (--cascade=orphan).`],
  ];
  const el = h('fieldset', { class: 'propagation', 'data-propagation': '' },
    h('legend', null, 'Propagation policy'),
    choices.map(([value, help], i) => h('div', { class: 'field field-check' },
      h('input', { type: 'radio', name: 'propagationPolicy', id: `pp-${value}`, value, checked: i === 0 }),
      h('label', { for: `pp-${value}` }, h('strong', null, value), ' — ', help))));
  return {
    el,
    value: () => {
      const c = el.querySelector('input[name=propagationPolicy]:checked');
      return c ? c.value : 'Background';
    },
  };
}

// deleteWithPolicy asks for confirmation, showing the propagation policy,
// and deletes. Resolves to true once the API accepted the deletion.
export async function deleteWithPolicy({ kindName, what, name, namespace, path }) {
  const choice = propagationChoice(what);
  const body = h('div', null,
    h('p', null, `Delete ${what} `, h('strong', null, name), ` in namespace ${namespace}?`),
    choice.el);
  const ok = await confirmDialog({ title: `Delete ${name}`, name: 'delete', body, confirmLabel: 'Delete', danger: true });
  if (!ok) return false;
  clearError();
  try {
    await del(path, { propagationPolicy: choice.value() });
    toast(`${kindName} "${name}" deleted`, 'info');
    return true;
  } catch (e) {
    showError(e);
    return false;
  }
}

// revisionsOf lists a controller's revisions, newest first, each as
// {revision, name, images, changeCause, template, source, created}.
export function deploymentRevisions(replicaSets) {
  return replicaSets
    .filter((rs) => rs.metadata.annotations && rs.metadata.annotations[REVISION])
    .map((rs) => ({
      revision: Number(rs.metadata.annotations[REVISION]),
      name: rs.metadata.name,
      images: imagesOf(rs.spec.template),
      changeCause: rs.metadata.annotations[CHANGE_CAUSE] || '',
      replicas: `${(rs.status && rs.status.readyReplicas) || 0}/${rs.spec.replicas ?? 1}`,
      created: rs.metadata.creationTimestamp,
      source: rs,
    }))
    .sort((a, b) => b.revision - a.revision);
}

export function controllerRevisions(revs) {
  return revs
    .map((cr) => {
      const tpl = cr.data && cr.data.spec && cr.data.spec.template;
      return {
        revision: Number(cr.revision || 0),
        name: cr.metadata.name,
        images: imagesOf(tpl),
        changeCause: (cr.metadata.annotations && cr.metadata.annotations[CHANGE_CAUSE]) || '',
        replicas: '',
        created: cr.metadata.creationTimestamp,
        source: cr,
      };
    })
    .sort((a, b) => b.revision - a.revision);
}

// templateOfRevision strips what the controller adds to a revision's
// template so it can be compared with the live one.
function revisionTemplate(rev) {
  const src = rev.source;
  if (src.kind === 'ControllerRevision' || src.data) {
    const t = structuredClone((src.data && src.data.spec && src.data.spec.template) || {});
    delete t.$patch;
    return t;
  }
  return withoutHash(src.spec.template);
}

function currentRevision(kindKey, obj, revisions) {
  if (!revisions.length) return 0;
  if (kindKey === 'deployments') return Number((obj.metadata.annotations || {})[REVISION] || 0);
  if (kindKey === 'statefulsets' && obj.status && obj.status.updateRevision) {
    const r = revisions.find((x) => x.name === obj.status.updateRevision);
    if (r) return r.revision;
  }
  const live = withoutHash(obj.spec.template);
  const match = revisions.find((r) => deepEqual(revisionTemplate(r), live));
  return match ? match.revision : revisions[0].revision;
}

// rollbackPatch is what `kubectl rollout undo --to-revision=N` sends, or
// null with the reason it skips: the live template already is the
// revision's. For a Deployment: the revision's ReplicaSet template, less
// its pod-template-hash label, as a JSON patch that also replaces the
// annotations (the Deployment's own bookkeeping ones kept, the rest taken
// from the ReplicaSet). For a StatefulSet or DaemonSet: the
// ControllerRevision's data as a strategic merge patch.
export function rollbackPatch(kindKey, obj, rev) {
  if (kindKey === 'deployments' && obj.spec.paused) {
    throw new Error("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again");
  }
  const target = revisionTemplate(rev);
  if (deepEqual(target, withoutHash(obj.spec.template))) {
    return { skip: `skipped rollback (current template already matches revision ${rev.revision})` };
  }
  if (kindKey !== 'deployments') return { type: 'strategic', body: rev.source.data };
  const annotations = {};
  const own = obj.metadata.annotations || {};
  for (const k of ANNOTATIONS_TO_SKIP) if (k in own) annotations[k] = own[k];
  for (const [k, v] of Object.entries(rev.source.metadata.annotations || {})) {
    if (!ANNOTATIONS_TO_SKIP.has(k)) annotations[k] = v;
  }
  return {
    type: 'json',
    body: [
      { op: 'replace', path: '/spec/template', value: target },
      // add, not replace: it also works on a Deployment without annotations.
      { op: 'add', path: '/metadata/annotations', value: annotations },
    ],
  };
}

async function rollBack(kindKey, namespace, name, rev) {
  const path = kindPath(kindKey, namespace, name);
  const p = rollbackPatch(kindKey, await get(path), rev);
  if (p.skip) return p.skip;
  // The template and annotations are set to the revision's: repeatable.
  await patch(path, p.body, p.type, { repeatable: true });
  return 'rolled back';
}

// restartPatch is `kubectl rollout restart`'s patch: a new pod template
// annotation, so the controller rolls every pod.
export function restartPatch(now) {
  return { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: rfc3339(now) } } } } };
}

// jobFromCronJob is `kubectl create job NAME --from=cronjob/CJ`: the job
// template with the manual-instantiation mark (the template's own
// annotations win) and an owner reference without blockOwnerDeletion,
// which would need the cronjobs/finalizers permission.
export function jobFromCronJob(cj, name) {
  const tpl = cj.spec.jobTemplate || {};
  const meta = tpl.metadata || {};
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cj.metadata.namespace,
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual', ...(meta.annotations || {}) },
      labels: meta.labels,
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name, uid: cj.metadata.uid, controller: true }],
    },
    spec: tpl.spec,
  };
}

function kindName(kindKey) {
  const k = KINDS[kindKey];
  return `${k.kind.toLowerCase()}.${k.group}`;
}

export function mount(outlet, ctx) {
  const [kindKey, rawNs, rawName] = ctx.params || [];
  const spec = KINDS[kindKey];
  const namespace = decodeURIComponent(rawNs || '');
  const name = decodeURIComponent(rawName || '');
  ensureStyles();
  const root = h('section', { 'data-view': 'workload', class: 'view wl-view', 'aria-labelledby': 'workload-title' });
  clear(outlet).appendChild(root);
  if (!spec || !namespace || !name) {
    root.append(h('h1', { id: 'workload-title' }, 'Workload'),
      h('p', { class: 'bad-text' }, `No such workload route: #/workloads/${(ctx.params || []).join('/')}. Kinds: ${Object.keys(KINDS).join(', ')}.`));
    return () => {};
  }

  const stops = [];
  let obj = null;
  let revisions = [];
  let started = false;
  const ref = `${kindName(kindKey)}/${name}`;

  const title = h('h1', { id: 'workload-title' }, h('span', { class: 'muted' }, `${spec.kind} `), name);
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    h('a', { href: '#/workloads' }, 'Workloads'), ' / ', spec.title, ' / ', namespace);
  const actions = h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' });
  const rollout = h('p', { class: 'rollout', 'data-rollout': '', role: 'status' });
  const summary = h('dl', { class: 'kv', 'data-summary': '' });
  const conditions = h('div', { 'data-conditions-panel': '' });
  const history = h('div', { 'data-history': '' });
  const children = h('div', { 'data-children': '' });
  const events = h('div', { 'data-events': '' });
  const missing = h('p', { class: 'bad-text', role: 'alert', hidden: true });
  const panel = (heading, el) => h('section', { class: 'panel' }, h('h2', null, heading), el);
  // A CronJob's status has no conditions: its status takes the width.
  const sections = [kindKey === 'cronjobs'
    ? panel('Status', summary)
    : h('div', { class: 'grid-2' }, panel('Status', summary), panel('Conditions', conditions))];
  if (['deployments', 'statefulsets', 'daemonsets'].includes(kindKey)) sections.push(panel('Revision history', history));
  sections.push(panel(kindKey === 'cronjobs' ? 'Jobs' : 'Pods', children), panel('Events', events));
  const body = h('div', { class: 'workload-body' }, rollout, sections);
  // The object's YAML, to read or edit, is the generic resource view's.
  const yamlLink = h('a', { href: `#/resources/${spec.group}/${spec.version}/${kindKey}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`, 'data-yaml-link': '' }, 'YAML');
  root.append(crumbs, h('div', { class: 'view-head' }, title, yamlLink, actions), missing, body);

  const buttons = {};
  // act runs an action with its failure in [data-error] and its success as
  // kubectl would print it.
  const act = (fn) => async () => {
    clearError();
    try {
      const msg = await fn();
      if (msg) toast(msg, 'info');
    } catch (e) {
      showError(e);
    }
  };

  const doScale = act(async () => {
    const current = obj ? (obj.spec.replicas ?? 1) : 1;
    const v = await formDialog({
      title: `Scale ${name}`, name: 'scale', confirmLabel: 'Scale',
      fields: [{ name: 'replicas', label: 'Replicas', type: 'number', value: current, min: 0, required: true }],
    });
    if (!v || v.replicas === null || Number.isNaN(v.replicas)) return '';
    await patch(kindPath(kindKey, namespace, name, 'scale'), { spec: { replicas: v.replicas } }, 'merge', { repeatable: true });
    return `${ref} scaled`;
  });

  const doRestart = act(async () => {
    if (kindKey === 'deployments' && obj && obj.spec.paused) {
      throw new Error(`can't restart paused deployment (run rollout resume first)`);
    }
    const ok = await confirmDialog({
      title: `Restart ${name}`, name: 'restart', confirmLabel: 'Restart',
      body: `Replace every pod of ${spec.kind} ${name}, as the rollout strategy allows (kubectl rollout restart).`,
    });
    if (!ok) return '';
    await patch(kindPath(kindKey, namespace, name), restartPatch(new Date()), 'strategic', { repeatable: true });
    return `${ref} restarted`;
  });

  // A Deployment pauses its rollouts (spec.paused, kubectl rollout pause);
  // a CronJob its schedule (spec.suspend, which kubectl only patches).
  const pauseField = kindKey === 'cronjobs' ? 'suspend' : 'paused';
  const setPaused = (paused) => act(async () => {
    await patch(kindPath(kindKey, namespace, name), { spec: { [pauseField]: paused } }, kindKey === 'cronjobs' ? 'merge' : 'strategic', { repeatable: true });
    if (kindKey === 'cronjobs') return `${ref} ${paused ? 'suspended' : 'resumed'}`;
    return `${ref} ${paused ? 'paused' : 'resumed'}`;
  });

  const doRollback = act(async () => {
    const current = currentRevision(kindKey, obj, revisions);
    const others = revisions.filter((r) => r.revision !== current);
    if (!others.length) throw new Error(`no rollout history found for ${ref} other than the current revision`);
    const previous = others.find((r) => r.revision < current) || others[0];
    const v = await formDialog({
      title: `Roll back ${name}`, name: 'rollback', confirmLabel: 'Roll back',
      body: 'Put the chosen revision\'s pod template back (kubectl rollout undo --to-revision).',
      fields: [{
        name: 'revision', label: 'Revision', type: 'select', value: previous.revision,
        options: others.map((r) => ({ value: r.revision, label: `${r.revision}: ${r.images}${r.changeCause ? ` (${r.changeCause})` : ''}` })),
      }],
    });
    if (!v) return '';
    const rev = revisions.find((r) => String(r.revision) === String(v.revision));
    if (!rev) throw new Error(`unable to find specified revision ${v.revision} in history`);
    const res = await rollBack(kindKey, namespace, name, rev);
    return `${ref} ${res}`;
  });

  const doTrigger = act(async () => {
    const suffix = Math.random().toString(36).slice(2, 7);
    const v = await formDialog({
      title: `Run ${name} now`, name: 'trigger', confirmLabel: 'Create job',
      body: 'Create a Job from the CronJob\'s job template (kubectl create job --from=cronjob/NAME).',
      fields: [{ name: 'name', label: 'Job name', type: 'text', value: `${name.slice(0, 63 - 13)}-manual-${suffix}`, required: true }],
    });
    if (!v || !v.name) return '';
    const job = jobFromCronJob(await get(kindPath('cronjobs', namespace, name)), v.name);
    await create(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace }), job);
    return `job.batch/${v.name} created`;
  });

  const doDelete = async () => {
    const gone = await deleteWithPolicy({
      kindName: kindName(kindKey), what: spec.kind, name, namespace, path: kindPath(kindKey, namespace, name),
    });
    if (gone) ctx.navigate('#/workloads');
  };

  // The buttons are decided once: access reviews are per user and
  // namespace, not per state; pause and resume swap by spec.paused.
  async function buildActions() {
    const res = { group: spec.group, resource: kindKey, namespace };
    const [canPatch, canScale, canDelete, canCreateJob] = await Promise.all([
      canI('patch', res),
      ['deployments', 'statefulsets', 'replicasets'].includes(kindKey) ? canI('patch', { ...res, subresource: 'scale' }) : false,
      canI('delete', res),
      kindKey === 'cronjobs' ? canI('create', { group: 'batch', resource: 'jobs', namespace }) : false,
    ]);
    const btn = (action, label, onclick, cls = 'btn') => {
      buttons[action] = h('button', { type: 'button', class: cls, 'data-action': action, onclick }, label);
      actions.appendChild(buttons[action]);
    };
    if (canScale) btn('scale', 'Scale', doScale);
    if (canPatch && ['deployments', 'statefulsets', 'daemonsets'].includes(kindKey)) {
      btn('restart', 'Restart', doRestart);
      btn('rollback', 'Roll back', doRollback);
    }
    if (canPatch && kindKey === 'deployments') {
      btn('pause', 'Pause', setPaused(true));
      btn('resume', 'Resume', setPaused(false));
    }
    if (canPatch && kindKey === 'cronjobs') {
      btn('pause', 'Suspend', setPaused(true));
      btn('resume', 'Resume', setPaused(false));
    }
    if (canCreateJob) btn('trigger', 'Run now', doTrigger);
    if (canDelete) btn('delete', 'Delete', doDelete, 'btn danger');
    updateActions();
  }

  function updateActions() {
    if (!obj) return;
    const paused = !!obj.spec[pauseField];
    if (buttons.pause) buttons.pause.hidden = paused;
    if (buttons.resume) buttons.resume.hidden = !paused;
    if (buttons.rollback) buttons.rollback.hidden = revisions.length < 2;
  }

  function renderSummary() {
    const s = obj.spec || {};
    const st = obj.status || {};
    const meta = obj.metadata;
    const owner = controllerOf(obj);
    const ownerRoute = owner && OWNER_ROUTES[owner.kind];
    const tpl = s.template || (s.jobTemplate && s.jobTemplate.spec && s.jobTemplate.spec.template);
    const rows = [
      field('Namespace', meta.namespace),
      field('Created', `${age(meta.creationTimestamp)} ago (${meta.creationTimestamp})`),
      field('Labels', labelsText(meta.labels)),
      owner ? field('Controlled by', ownerRoute
        ? h('a', { href: `#/workloads/${ownerRoute}/${encodeURIComponent(meta.namespace)}/${encodeURIComponent(owner.name)}` }, `${owner.kind}/${owner.name}`)
        : `${owner.kind}/${owner.name}`) : null,
      s.selector ? field('Selector', labelSelectorString(s.selector) || '<none>') : null,
    ];
    switch (kindKey) {
      case 'deployments':
        rows.push(
          field('Replicas', `${s.replicas ?? 1} desired | ${st.updatedReplicas || 0} updated | ${st.replicas || 0} total | ${st.availableReplicas || 0} available | ${st.unavailableReplicas || 0} unavailable`),
          field('Strategy', s.strategy && s.strategy.type === 'RollingUpdate' && s.strategy.rollingUpdate
            ? `RollingUpdate (max unavailable ${s.strategy.rollingUpdate.maxUnavailable ?? '25%'}, max surge ${s.strategy.rollingUpdate.maxSurge ?? '25%'})`
            : (s.strategy && s.strategy.type) || 'RollingUpdate'),
          field('Revision', (meta.annotations || {})[REVISION] || ''),
          field('Paused', s.paused ? 'yes (kubectl rollout resume to continue)' : 'no'));
        break;
      case 'statefulsets':
        rows.push(
          field('Replicas', `${s.replicas ?? 1} desired | ${st.replicas || 0} total | ${st.readyReplicas || 0} ready | ${st.updatedReplicas || 0} updated`),
          field('Service', s.serviceName || ''),
          field('Update strategy', (s.updateStrategy && s.updateStrategy.type) || 'RollingUpdate'),
          field('Revisions', st.currentRevision ? `current ${st.currentRevision}, update ${st.updateRevision || st.currentRevision}` : ''));
        break;
      case 'daemonsets':
        rows.push(
          field('Pods', `${st.desiredNumberScheduled || 0} desired | ${st.currentNumberScheduled || 0} current | ${st.numberReady || 0} ready | ${st.updatedNumberScheduled || 0} up-to-date | ${st.numberAvailable || 0} available | ${st.numberMisscheduled || 0} misscheduled`),
          field('Update strategy', (s.updateStrategy && s.updateStrategy.type) || 'RollingUpdate'));
        break;
      case 'replicasets':
        rows.push(field('Replicas', `${st.replicas || 0} current / ${s.replicas ?? 1} desired, ${st.readyReplicas || 0} ready`));
        break;
      case 'jobs':
        rows.push(
          field('Status', jobStatus(obj)),
          field('Completions', jobCompletions(obj)),
          field('Parallelism', String(s.parallelism ?? 1)),
          field('Pods', `${st.active || 0} active / ${st.succeeded || 0} succeeded / ${st.failed || 0} failed`),
          field('Duration', jobDuration(obj)),
          field('Suspended', s.suspend ? 'yes' : 'no'));
        break;
      case 'cronjobs':
        rows.push(
          field('Schedule', s.schedule),
          field('Time zone', s.timeZone || '<none>'),
          field('Suspend', s.suspend ? 'True' : 'False'),
          field('Concurrency policy', s.concurrencyPolicy || 'Allow'),
          field('Active jobs', String(((st.active) || []).length)),
          field('Last schedule', st.lastScheduleTime ? `${age(st.lastScheduleTime)} ago` : '<none>'),
          field('Last successful', st.lastSuccessfulTime ? `${age(st.lastSuccessfulTime)} ago` : '<none>'));
        break;
      default:
        break;
    }
    if (tpl) {
      rows.push(field('Containers', h('ul', { class: 'plain-list' },
        ((tpl.spec && tpl.spec.containers) || []).map((c) => h('li', null, h('strong', null, c.name), ` ${c.image}`)))));
    }
    clear(summary);
    for (const r of rows) if (r) summary.append(...r);
  }

  function renderRollout() {
    if (!spec.rollout) {
      rollout.hidden = true;
      return;
    }
    const r = spec.rollout(obj);
    rollout.textContent = r.message;
    rollout.className = `rollout ${r.failed ? 'bad-text' : r.done ? 'ok-text' : 'warn-text'}`;
    rollout.setAttribute('data-done', r.done ? 'true' : 'false');
  }

  let historyTable = null;
  function renderHistory() {
    if (!historyTable || !obj) return;
    const current = obj ? currentRevision(kindKey, obj, revisions) : 0;
    historyTable.setItems(revisions.map((r) => ({ ...r, current: r.revision === current })));
    updateActions();
  }

  // The watches below outlive the object when it is deleted; they hold on
  // to its UID rather than read obj, which is then null.
  function startHistory() {
    const uid = obj.metadata.uid;
    const selector = labelSelectorString(obj.spec.selector);
    const isDeploy = kindKey === 'deployments';
    historyTable = table({
      columns: [
        { title: 'REVISION', value: (r) => (r.current ? h('span', null, String(r.revision), h('span', { class: 'badge' }, ' current')) : String(r.revision)), sort: (r) => r.revision, width: '7em' },
        { title: isDeploy ? 'REPLICASET' : 'CONTROLLERREVISION', value: (r) => (isDeploy ? h('a', { href: workloadHash('replicasets', r.source), tabindex: -1 }, r.name) : r.name), width: 'minmax(12em, 2fr)' },
        { title: 'IMAGES', value: (r) => h('span', { title: r.images }, r.images), width: 'minmax(12em, 2fr)' },
        { title: 'CHANGE-CAUSE', value: (r) => r.changeCause || '<none>', width: 'minmax(10em, 2fr)' },
        ...(isDeploy ? [{ title: 'READY', value: (r) => r.replicas, width: '5em' }] : []),
        { title: 'AGE', value: (r) => age(r.created), width: '5em' },
      ],
      key: (r) => r.name,
      empty: 'No revisions recorded.',
      label: 'Revision history',
    });
    clear(history).appendChild(historyTable.el);
    const path = isDeploy
      ? resourcePath({ group: 'apps', version: 'v1', resource: 'replicasets', namespace })
      : resourcePath({ group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace });
    const w = watchList(path, {
      query: selector ? { labelSelector: selector } : {},
      onUpdate: (items) => {
        const mine = items.filter(ownedBy(uid));
        revisions = isDeploy ? deploymentRevisions(mine) : controllerRevisions(mine);
        renderHistory();
        markUpdated(root);
      },
    });
    stops.push(() => w.stop());
  }

  function startChildren() {
    const uid = obj.metadata.uid;
    if (kindKey === 'cronjobs') {
      const jobsTable = table({
        columns: [...nameColumns(namespace, (j) => workloadHash('jobs', j)), ...KINDS.jobs.columns],
        key: (j) => `${j.metadata.namespace}/${j.metadata.name}`,
        onOpen: (j) => ctx.navigate(workloadHash('jobs', j)),
        empty: 'No jobs.',
        label: 'Jobs',
      });
      clear(children).appendChild(jobsTable.el);
      const w = watchList(kindPath('jobs', namespace), {
        onUpdate: (items) => {
          jobsTable.setItems(items.filter(ownedBy(uid)));
          markUpdated(root);
        },
      });
      stops.push(() => w.stop(), tick(jobsTable));
      return;
    }
    const selector = labelSelectorString(obj.spec.selector);
    const podsTable = table({
      columns: podColumns(namespace),
      key: (p) => `${p.metadata.namespace}/${p.metadata.name}`,
      onOpen: (p) => ctx.navigate(podHash(p)),
      empty: 'No pods.',
      label: 'Pods',
    });
    clear(children).appendChild(podsTable.el);
    if (!selector) return; // a selector that selects nothing (kubectl: <none>)
    const w = watchList(resourcePath({ version: 'v1', resource: 'pods', namespace }), {
      query: { labelSelector: selector },
      onUpdate: (items) => {
        podsTable.setItems(items);
        markUpdated(root);
      },
    });
    stops.push(() => w.stop(), tick(podsTable));
  }

  // tick redraws a table's rows now and then, for the ages.
  function tick(t) {
    const id = setInterval(() => t.refresh && t.refresh(), 10000);
    return () => clearInterval(id);
  }

  const ev = eventsPanel({ namespace, kind: spec.kind, name });
  events.appendChild(ev.el);
  stops.push(ev.stop, tick(ev));

  const self = watchList(kindPath(kindKey, namespace), {
    query: { fieldSelector: `metadata.name=${name}` },
    onUpdate: (items) => {
      obj = items.find((o) => o.metadata.name === name) || null;
      if (!obj) {
        missing.textContent = `${spec.kind} "${name}" not found in namespace ${namespace}.`;
        missing.hidden = false;
        body.hidden = true;
        actions.hidden = true;
        markUpdated(root);
        return;
      }
      missing.hidden = true;
      body.hidden = false;
      actions.hidden = false;
      renderRollout();
      renderSummary();
      clear(conditions).appendChild(conditionsTable(obj.status && obj.status.conditions));
      if (!started) {
        started = true;
        if (['deployments', 'statefulsets', 'daemonsets'].includes(kindKey)) startHistory();
        startChildren();
      } else {
        renderHistory();
      }
      updateActions();
      markUpdated(root);
    },
    onError: (e) => {
      missing.textContent = e.message;
      missing.hidden = false;
    },
  });
  stops.push(() => self.stop());
  buildActions().catch(showError);

  return () => {
    for (const s of stops) s();
  };
}
