// The workloads view (#/workloads): one tab per controller kind, each a live
// table with kubectl's columns and, where it means something, the rollout's
// state. Also the kind table, kubectl's rollout status words, selectors and
// the search box's grammar, which the workload and pod views share.

import { watchList, resourcePath } from '../lib/api.js';
import { h, clear, age, humanDuration, markUpdated, showError } from '../lib/dom.js';
import { table } from '../lib/table.js';

const none = '<none>';

// labelSelectorString renders a LabelSelector as metav1.FormatLabelSelector
// does, which is also what the API accepts as ?labelSelector=.
export function labelSelectorString(sel) {
  if (!sel) return '';
  const parts = [];
  for (const k of Object.keys(sel.matchLabels || {}).sort()) parts.push(`${k}=${sel.matchLabels[k]}`);
  for (const e of sel.matchExpressions || []) {
    const vals = (e.values || []).slice().sort().join(',');
    switch (e.operator) {
      case 'In': parts.push(`${e.key} in (${vals})`); break;
      case 'NotIn': parts.push(`${e.key} notin (${vals})`); break;
      case 'Exists': parts.push(e.key); break;
      case 'DoesNotExist': parts.push(`!${e.key}`); break;
      default: break;
    }
  }
  return parts.join(',');
}

// parseSearch reads the search box. Terms that look like selectors go to
// the server: those on a field the API indexes (spec.nodeName=n1,
// status.phase=Pending, metadata.name=x) as a field selector, the others
// (app=web, tier!=db, env in (a,b), !canary) as a label selector. Any other
// text filters names in the page, since the API has no substring match.
export function parseSearch(text) {
  const t = (text || '').trim();
  const out = { labelSelector: '', fieldSelector: '', name: '' };
  if (!t) return out;
  if (!/[=!]|\s(in|notin)\s*\(/.test(t)) {
    out.name = t.toLowerCase();
    return out;
  }
  const labels = [];
  const fields = [];
  for (const term of splitSelector(t)) {
    if (/^(spec|status|metadata)\.[A-Za-z.]+\s*(==|!=|=)/.test(term)) fields.push(term.replace(/\s+/g, ''));
    else labels.push(term);
  }
  out.labelSelector = labels.join(',');
  out.fieldSelector = fields.join(',');
  return out;
}

// splitSelector splits on the commas between terms, not those in a set.
function splitSelector(s) {
  const terms = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      if (cur.trim()) terms.push(cur.trim());
      cur = '';
    } else {
      cur += ch;
    }
  }
  if (cur.trim()) terms.push(cur.trim());
  return terms;
}

export function selectorQuery(search, extraFieldSelector) {
  const q = {};
  if (search.labelSelector) q.labelSelector = search.labelSelector;
  const fields = [extraFieldSelector, search.fieldSelector].filter(Boolean).join(',');
  if (fields) q.fieldSelector = fields;
  return q;
}

export function sameSelectors(a, b) {
  return a.labelSelector === b.labelSelector && a.fieldSelector === b.fieldSelector;
}

// Rollout status, worded as `kubectl rollout status` prints it
// (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go). Each returns
// {message, done, failed, short}: short is the table's cell.
function deploymentRollout(d) {
  const st = d.status || {};
  const spec = d.spec || {};
  const name = d.metadata.name;
  const gen = d.metadata.generation || 0;
  const updated = st.updatedReplicas || 0;
  const replicas = spec.replicas ?? 1;
  const paused = spec.paused ? ' (paused)' : '';
  if (gen > (st.observedGeneration || 0)) {
    return { message: 'Waiting for deployment spec update to be observed...', done: false, short: `Observing${paused}` };
  }
  const progressing = (st.conditions || []).find((c) => c.type === 'Progressing');
  if (progressing && progressing.reason === 'ProgressDeadlineExceeded') {
    return { message: `error: deployment "${name}" exceeded its progress deadline`, done: false, failed: true, short: 'Deadline exceeded' };
  }
  if (updated < replicas) {
    return { message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`, done: false, short: `${updated}/${replicas} updated${paused}` };
  }
  if ((st.replicas || 0) > updated) {
    return { message: `Waiting for deployment "${name}" rollout to finish: ${(st.replicas || 0) - updated} old replicas are pending termination...`, done: false, short: `${(st.replicas || 0) - updated} old pending${paused}` };
  }
  if ((st.availableReplicas || 0) < updated) {
    return { message: `Waiting for deployment "${name}" rollout to finish: ${st.availableReplicas || 0} of ${updated} updated replicas are available...`, done: false, short: `${st.availableReplicas || 0}/${updated} available${paused}` };
  }
  return { message: `deployment "${name}" successfully rolled out`, done: true, short: spec.paused ? 'Paused' : 'Complete' };
}

function statefulSetRollout(s) {
  const st = s.status || {};
  const spec = s.spec || {};
  const strategy = spec.updateStrategy || {};
  if ((strategy.type || 'RollingUpdate') !== 'RollingUpdate') {
    return { message: 'error: rollout status is only available for RollingUpdate strategy type', done: true, short: strategy.type };
  }
  if (!st.observedGeneration || (s.metadata.generation || 0) > st.observedGeneration) {
    return { message: 'Waiting for statefulset spec update to be observed...', done: false, short: 'Observing' };
  }
  const replicas = spec.replicas ?? 1;
  const ready = st.readyReplicas || 0;
  if (ready < replicas) {
    return { message: `Waiting for ${replicas - ready} pods to be ready...`, done: false, short: `${ready}/${replicas} ready` };
  }
  const updated = st.updatedReplicas || 0;
  if (strategy.rollingUpdate) {
    const partition = strategy.rollingUpdate.partition;
    if (partition !== undefined && partition !== null && updated < replicas - partition) {
      return { message: `Waiting for partitioned roll out to finish: ${updated} out of ${replicas - partition} new pods have been updated...`, done: false, short: `${updated}/${replicas - partition} updated` };
    }
    return { message: `partitioned roll out complete: ${updated} new pods have been updated...`, done: true, short: 'Complete' };
  }
  if (st.updateRevision !== st.currentRevision) {
    return { message: `waiting for statefulset rolling update to complete ${updated} pods at revision ${st.updateRevision}...`, done: false, short: `${updated}/${replicas} updated` };
  }
  return { message: `statefulset rolling update complete ${st.currentReplicas || 0} pods at revision ${st.currentRevision}...`, done: true, short: 'Complete' };
}

function daemonSetRollout(ds) {
  const st = ds.status || {};
  const strategy = (ds.spec && ds.spec.updateStrategy) || {};
  const name = ds.metadata.name;
  if ((strategy.type || 'RollingUpdate') !== 'RollingUpdate') {
    return { message: 'error: rollout status is only available for RollingUpdate strategy type', done: true, short: strategy.type };
  }
  if ((ds.metadata.generation || 0) > (st.observedGeneration || 0)) {
    return { message: 'Waiting for daemon set spec update to be observed...', done: false, short: 'Observing' };
  }
  const desired = st.desiredNumberScheduled || 0;
  const updated = st.updatedNumberScheduled || 0;
  const available = st.numberAvailable || 0;
  if (updated < desired) {
    return { message: `Waiting for daemon set "${name}" rollout to finish: ${updated} out of ${desired} new pods have been updated...`, done: false, short: `${updated}/${desired} updated` };
  }
  if (available < desired) {
    return { message: `Waiting for daemon set "${name}" rollout to finish: ${available} of ${desired} updated pods are available...`, done: false, short: `${available}/${desired} available` };
  }
  return { message: `daemon set "${name}" successfully rolled out`, done: true, short: 'Complete' };
}

// jobStatus is the STATUS column of `kubectl get jobs`: terminal conditions
// outrank deletion, which outranks the transient ones. Only the first
// condition of a type counts, as upstream reads them.
export function jobStatus(job) {
  const cond = (t) => {
    const c = ((job.status && job.status.conditions) || []).find((x) => x.type === t);
    return !!c && c.status === 'True';
  };
  if (cond('Complete')) return 'Complete';
  if (cond('Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (cond('Suspended')) return 'Suspended';
  if (cond('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

export function jobCompletions(job) {
  const spec = job.spec || {};
  const ok = (job.status && job.status.succeeded) || 0;
  if (spec.completions !== undefined && spec.completions !== null) return `${ok}/${spec.completions}`;
  if (spec.parallelism > 1) return `${ok}/1 of ${spec.parallelism}`;
  return `${ok}/1`;
}

export function jobDuration(job) {
  const st = job.status || {};
  if (!st.startTime) return '';
  const end = st.completionTime ? Date.parse(st.completionTime) : Date.now();
  return humanDuration((end - Date.parse(st.startTime)) / 1000);
}

const ratio = (a, b) => `${a || 0}/${b || 0}`;
const num = (v) => String(v || 0);

function nodeSelector(ds) {
  const sel = (ds.spec && ds.spec.template && ds.spec.template.spec && ds.spec.template.spec.nodeSelector) || {};
  const keys = Object.keys(sel).sort();
  return keys.length ? keys.map((k) => `${k}=${sel[k]}`).join(',') : none;
}

function boolPtr(v) {
  if (v === undefined || v === null) return '<unset>';
  return v ? 'True' : 'False';
}

const ageCol = { title: 'AGE', value: (o) => age(o.metadata.creationTimestamp), sort: (o) => -Date.parse(o.metadata.creationTimestamp || 0), width: '5em' };

function rolloutCol(fn) {
  return {
    title: 'ROLLOUT',
    value: (o) => {
      const r = fn(o);
      return h('span', { class: r.failed ? 'bad-text' : r.done ? 'ok-text' : 'warn-text', title: r.message }, r.short);
    },
    width: 'minmax(8em, 1fr)',
  };
}

// KINDS is every controller the view lists, by the route's KIND (the
// resource's plural). Columns are kubectl's, in its order, NAME first.
export const KINDS = {
  deployments: {
    kind: 'Deployment', group: 'apps', version: 'v1', title: 'Deployments',
    rollout: deploymentRollout,
    columns: [
      { title: 'READY', value: (o) => ratio(o.status && o.status.readyReplicas, o.spec.replicas ?? 1), width: '6em' },
      { title: 'UP-TO-DATE', value: (o) => num(o.status && o.status.updatedReplicas), width: '8.5em' },
      { title: 'AVAILABLE', value: (o) => num(o.status && o.status.availableReplicas), width: '8.5em' },
      ageCol,
      rolloutCol(deploymentRollout),
    ],
  },
  statefulsets: {
    kind: 'StatefulSet', group: 'apps', version: 'v1', title: 'StatefulSets',
    rollout: statefulSetRollout,
    columns: [
      { title: 'READY', value: (o) => ratio(o.status && o.status.readyReplicas, o.spec.replicas ?? 1), width: '6em' },
      ageCol,
      rolloutCol(statefulSetRollout),
    ],
  },
  daemonsets: {
    kind: 'DaemonSet', group: 'apps', version: 'v1', title: 'DaemonSets',
    rollout: daemonSetRollout,
    columns: [
      { title: 'DESIRED', value: (o) => num(o.status && o.status.desiredNumberScheduled), width: '6.5em' },
      { title: 'CURRENT', value: (o) => num(o.status && o.status.currentNumberScheduled), width: '6.5em' },
      { title: 'READY', value: (o) => num(o.status && o.status.numberReady), width: '6.5em' },
      { title: 'UP-TO-DATE', value: (o) => num(o.status && o.status.updatedNumberScheduled), width: '8.5em' },
      { title: 'AVAILABLE', value: (o) => num(o.status && o.status.numberAvailable), width: '8.5em' },
      { title: 'NODE SELECTOR', value: nodeSelector, width: 'minmax(11em, 1fr)' },
      ageCol,
      rolloutCol(daemonSetRollout),
    ],
  },
  jobs: {
    kind: 'Job', group: 'batch', version: 'v1', title: 'Jobs',
    columns: [
      {
        title: 'STATUS',
        value: (o) => {
          const s = jobStatus(o);
          return h('span', { class: s === 'Complete' ? 'ok-text' : s === 'Failed' ? 'bad-text' : 'warn-text' }, s);
        },
        width: '8em',
      },
      { title: 'COMPLETIONS', value: jobCompletions, width: '9.5em' },
      { title: 'DURATION', value: jobDuration, width: '7.5em' },
      ageCol,
    ],
  },
  cronjobs: {
    kind: 'CronJob', group: 'batch', version: 'v1', title: 'CronJobs',
    columns: [
      { title: 'SCHEDULE', value: (o) => o.spec.schedule },
      { title: 'TIMEZONE', value: (o) => o.spec.timeZone || none, width: '8em' },
      { title: 'SUSPEND', value: (o) => boolPtr(o.spec.suspend), width: '7em' },
      { title: 'ACTIVE', value: (o) => String(((o.status && o.status.active) || []).length), width: '6.5em' },
      {
        title: 'LAST SCHEDULE',
        value: (o) => (o.status && o.status.lastScheduleTime ? age(o.status.lastScheduleTime) : none),
        width: '10em',
      },
      ageCol,
    ],
  },
  replicasets: {
    kind: 'ReplicaSet', group: 'apps', version: 'v1', title: 'ReplicaSets',
    columns: [
      { title: 'DESIRED', value: (o) => String(o.spec.replicas ?? 1), width: '6.5em' },
      { title: 'CURRENT', value: (o) => num(o.status && o.status.replicas), width: '6.5em' },
      { title: 'READY', value: (o) => num(o.status && o.status.readyReplicas), width: '6.5em' },
      ageCol,
    ],
  },
};

export function kindPath(kindKey, namespace, name, subresource) {
  const k = KINDS[kindKey];
  return resourcePath({ group: k.group, version: k.version, resource: kindKey, namespace, name, subresource });
}

export function workloadHash(kindKey, obj) {
  return `#/workloads/${kindKey}/${encodeURIComponent(obj.metadata.namespace)}/${encodeURIComponent(obj.metadata.name)}`;
}

// nameColumns are the NAMESPACE (all namespaces only, as with kubectl -A)
// and NAME columns; NAME links to the object's own view.
export function nameColumns(namespace, hashOf) {
  const cols = [];
  if (!namespace) cols.push({ title: 'NAMESPACE', value: (o) => o.metadata.namespace, width: 'minmax(8em, 1fr)' });
  cols.push({
    title: 'NAME',
    value: (o) => h('a', { href: hashOf(o), tabindex: -1 }, o.metadata.name),
    sort: (o) => o.metadata.name,
    width: 'minmax(12em, 2fr)',
  });
  return cols;
}

let styled = false;
// ensureStyles adds workloads.css, the rules these views need beyond
// style.css, once per page.
export function ensureStyles() {
  if (styled) return;
  styled = true;
  document.head.appendChild(h('link', { rel: 'stylesheet', href: new URL('./workloads.css', import.meta.url).href, 'data-workloads-css': '' }));
}

const TAB_KEY = 'orca.workloads.tab';
// Ages move with time alone: redraw the rows in view now and then.
const AGE_REFRESH_MS = 10000;

export function mount(outlet, ctx) {
  const order = Object.keys(KINDS);
  let current = sessionStorage.getItem(TAB_KEY);
  if (!KINDS[current]) current = 'deployments';
  let search = parseSearch(ctx.search);
  const items = Object.fromEntries(order.map((k) => [k, []]));
  const loaded = Object.fromEntries(order.map((k) => [k, false]));
  const failed = Object.fromEntries(order.map((k) => [k, '']));
  const watches = [];
  let tbl = null;

  ensureStyles();
  const root = h('section', { 'data-view': 'workloads', class: 'view wl-view', 'aria-labelledby': 'workloads-title' });
  const title = h('h1', { id: 'workloads-title' }, 'Workloads');
  const tabs = {};
  const counts = {};
  const tablist = h('div', { role: 'tablist', class: 'tabs', 'aria-label': 'Workload kinds', onkeydown: tabKey });
  for (const k of order) {
    counts[k] = h('span', { class: 'tab-count', 'data-count': '' }, '…');
    tabs[k] = h('button', {
      type: 'button', role: 'tab', id: `wl-tab-${k}`, 'aria-controls': 'wl-panel', 'data-tab': k,
      onclick: () => select(k, false),
    }, KINDS[k].title, ' ', counts[k]);
    tablist.appendChild(tabs[k]);
  }
  const status = h('p', { class: 'view-status bad-text', 'data-watch-error': '', role: 'status', hidden: true });
  const panel = h('div', { role: 'tabpanel', id: 'wl-panel', class: 'tab-panel' });
  root.append(title, tablist, status, panel);
  clear(outlet).appendChild(root);

  function tabKey(e) {
    const i = order.indexOf(current);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: order.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    select(order[(next + order.length) % order.length], true);
  }

  function nameFilter() {
    const n = search.name;
    return n ? (o) => o.metadata.name.toLowerCase().includes(n) : null;
  }

  function select(k, focus) {
    current = k;
    sessionStorage.setItem(TAB_KEY, k);
    for (const x of order) {
      tabs[x].setAttribute('aria-selected', x === k ? 'true' : 'false');
      tabs[x].tabIndex = x === k ? 0 : -1;
    }
    panel.setAttribute('aria-labelledby', `wl-tab-${k}`);
    const spec = KINDS[k];
    tbl = table({
      columns: [...nameColumns(ctx.namespace, (o) => workloadHash(k, o)), ...spec.columns],
      key: (o) => `${o.metadata.namespace}/${o.metadata.name}`,
      onOpen: (o) => ctx.navigate(workloadHash(k, o)),
      empty: loaded[k]
        ? `No ${spec.title} ${ctx.namespace ? `in ${ctx.namespace}` : 'in any namespace'}${search.labelSelector || search.fieldSelector ? ` match ${[search.labelSelector, search.fieldSelector].filter(Boolean).join(',')}` : ''}.`
        : 'Loading…',
      label: spec.title,
    });
    tbl.setFilter(nameFilter());
    tbl.setItems(items[k]);
    clear(panel).appendChild(tbl.el);
    status.textContent = failed[k] ? `${spec.title}: ${failed[k]}` : '';
    status.hidden = !failed[k];
    if (focus) tabs[k].focus();
    markUpdated(root);
  }

  function start() {
    for (const k of order) {
      const query = selectorQuery(search);
      watches.push(watchList(kindPath(k, ctx.namespace), {
        query,
        onUpdate: (list) => {
          items[k] = list;
          failed[k] = '';
          const firstLoad = !loaded[k];
          loaded[k] = true;
          counts[k].textContent = String(list.length);
          if (k === current) status.hidden = true;
          if (k === current) {
            // The empty text says "Loading…" until the first list arrives.
            if (firstLoad) select(k, false);
            else tbl.setItems(list);
            markUpdated(root);
          }
        },
        onError: (e) => {
          // A kind the user may not list is said so in its tab, not left
          // "Loading…"; the watch keeps retrying, so a new grant shows up.
          failed[k] = e.message;
          if (e.status === 403) counts[k].textContent = '–';
          if (k === current) {
            status.textContent = `${KINDS[k].title}: ${e.message}`;
            status.hidden = false;
            if (!loaded[k]) { loaded[k] = true; select(k, false); }
          }
        },
      }));
    }
  }

  function stop() {
    while (watches.length) watches.pop().stop();
  }

  const onSearch = (text) => {
    const next = parseSearch(text);
    const restart = !sameSelectors(next, search);
    search = next;
    if (restart) {
      stop();
      for (const k of order) { items[k] = []; loaded[k] = false; counts[k].textContent = '…'; }
      select(current, false);
      start();
    } else if (tbl) {
      tbl.setFilter(nameFilter());
      markUpdated(root);
    }
  };
  const offSearch = ctx.onSearch ? ctx.onSearch(onSearch) : null;

  select(current, false);
  try {
    start();
  } catch (e) {
    showError(e);
  }
  const ticker = setInterval(() => { if (tbl && tbl.refresh) tbl.refresh(); }, AGE_REFRESH_MS);

  return () => {
    clearInterval(ticker);
    stop();
    if (typeof offSearch === 'function') offSearch();
  };
}
