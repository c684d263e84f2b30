// The pods view (#/pods): a live, virtualised table with kubectl's wide
// columns, filtered on the server by the search box's label selector and,
// when the route names one, by node. Also podSummary (kubectl's READY,
// STATUS and RESTARTS for one pod) and the pod columns the workload view
// reuses.

import { watchList, resourcePath } from '../lib/api.js';
import { h, clear, age, markUpdated } from '../lib/dom.js';
import { table } from '../lib/table.js';
import { parseSearch, nameColumns, selectorQuery, sameSelectors, ensureStyles } from './workloads.js';

// The node lifecycle controller's reason on pods of a node it lost
// (k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason).
const nodeUnreachablePodReason = 'NodeLost';

const isSidecar = (c) => !!c && c.restartPolicy === 'Always';

function conditionTrue(pod, type) {
  // Only the first condition of a type counts, as upstream reads them.
  const c = ((pod.status && pod.status.conditions) || []).find((x) => x.type === type);
  return !!c && c.status === 'True';
}

function later(a, b) {
  if (!b) return a;
  return !a || Date.parse(b) > Date.parse(a) ? b : a;
}

// podSummary computes `kubectl get pods`'s READY, STATUS and RESTARTS the
// way upstream's printPod does, branch for branch and in its order: the
// STATUS column is a heuristic people have learned to read, so Init:1/2,
// CrashLoopBackOff, Completed, NotReady and Terminating come out as they
// would in a terminal.
export function podSummary(pod) {
  const spec = pod.spec || {};
  const st = pod.status || {};
  const inits = spec.initContainers || [];
  let restarts = 0;
  let sidecarRestarts = 0;
  let total = (spec.containers || []).length;
  let ready = 0;
  let lastRestart = '';
  let lastSidecarRestart = '';

  let reason = st.reason || st.phase || '';
  for (const c of st.conditions || []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initByName = new Map();
  for (const c of inits) {
    initByName.set(c.name, c);
    if (isSidecar(c)) total++;
  }

  let initializing = false;
  const initStatuses = st.initContainerStatuses || [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    const state = c.state || {};
    restarts += c.restartCount || 0;
    const lastTerm = c.lastState && c.lastState.terminated;
    if (lastTerm) lastRestart = later(lastRestart, lastTerm.finishedAt);
    const sidecar = isSidecar(initByName.get(c.name));
    if (sidecar) {
      sidecarRestarts += c.restartCount || 0;
      if (lastTerm) lastSidecarRestart = later(lastSidecarRestart, lastTerm.finishedAt);
    }
    if (state.terminated && (state.terminated.exitCode || 0) === 0) continue;
    if (sidecar && c.started) {
      if (c.ready) ready++;
      continue;
    }
    if (state.terminated) {
      const t = state.terminated;
      if (!t.reason) reason = t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode || 0}`;
      else reason = `Init:${t.reason}`;
    } else if (state.waiting && state.waiting.reason && state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${inits.length}`;
    }
    // The first init container that has not finished decides the status.
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(pod, 'Initialized')) {
    // Once initialised, only sidecars' restarts remain among init containers.
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = st.containerStatuses || [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      const state = c.state || {};
      restarts += c.restartCount || 0;
      const lastTerm = c.lastState && c.lastState.terminated;
      if (lastTerm) lastRestart = later(lastRestart, lastTerm.finishedAt);
      if (state.waiting && state.waiting.reason) {
        reason = state.waiting.reason;
      } else if (state.terminated && state.terminated.reason) {
        reason = state.terminated.reason;
      } else if (state.terminated) {
        reason = state.terminated.signal ? `Signal:${state.terminated.signal}` : `ExitCode:${state.terminated.exitCode || 0}`;
      } else if (c.ready && state.running) {
        hasRunning = true;
        ready++;
      }
    }
    // A container that completed while others still run does not make the
    // pod Completed.
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  if (pod.metadata.deletionTimestamp && st.reason === nodeUnreachablePodReason) {
    reason = 'Unknown';
  } else if (pod.metadata.deletionTimestamp && st.phase !== 'Succeeded' && st.phase !== 'Failed') {
    reason = 'Terminating';
  }

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart) restartsText = `${restarts} (${age(lastRestart)} ago)`;
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText, restartCount: restarts };
}

export function podIP(pod) {
  const st = pod.status || {};
  return st.podIP || (st.podIPs && st.podIPs[0] && st.podIPs[0].ip) || '';
}

// statusClass colours STATUS: settled-good, settled-bad, or on its way.
export function statusClass(status) {
  if (status === 'Running' || status === 'Completed' || status === 'Succeeded') return 'ok-text';
  if (/^(Pending|ContainerCreating|PodInitializing|Init:\d+\/\d+|Terminating|SchedulingGated)$/.test(status)) return 'warn-text';
  return 'bad-text';
}

export function podHash(pod) {
  return `#/pods/${encodeURIComponent(pod.metadata.namespace)}/${encodeURIComponent(pod.metadata.name)}`;
}

// podColumns are kubectl's `get pods -o wide` columns up to NODE. The
// summary is computed once per pod object: watch updates replace the
// object, so a WeakMap keyed by it never serves a stale row.
export function podColumns(namespace) {
  const memo = new WeakMap();
  const sum = (p) => {
    let s = memo.get(p);
    if (!s) { s = podSummary(p); memo.set(p, s); }
    return s;
  };
  return [
    ...nameColumns(namespace, podHash),
    { title: 'READY', value: (p) => sum(p).ready, width: '6em' },
    {
      title: 'STATUS',
      value: (p) => {
        const s = sum(p).status;
        return h('span', { class: statusClass(s) }, s);
      },
      sort: (p) => sum(p).status,
      width: 'minmax(9em, 1fr)',
    },
    { title: 'RESTARTS', value: (p) => sum(p).restarts, sort: (p) => sum(p).restartCount, width: '9em' },
    { title: 'AGE', value: (p) => age(p.metadata.creationTimestamp), sort: (p) => -Date.parse(p.metadata.creationTimestamp || 0), width: '5em' },
    { title: 'IP', value: (p) => podIP(p) || '<none>', width: 'minmax(7em, 1fr)' },
    { title: 'NODE', value: (p) => (p.spec && p.spec.nodeName) || '<none>', width: 'minmax(8em, 1fr)' },
  ];
}

// routeFieldSelector reads a field selector from the route,
// #/pods/spec.nodeName=NODE (the cluster view's link to a node's pods): one
// part after "pods", where a pod's route has two. The pod view hands such
// routes to this view.
function routeFieldSelector(ctx) {
  const p = ctx.params || [];
  return p.length === 1 && p[0].includes('=') ? p[0] : '';
}

const AGE_REFRESH_MS = 10000;

export function mount(outlet, ctx) {
  const routeFields = routeFieldSelector(ctx);
  const nodeMatch = /(?:^|,)spec\.nodeName==?([^,]*)/.exec(routeFields);
  const node = nodeMatch ? nodeMatch[1] : '';
  let search = parseSearch(ctx.search);
  let watch = null;

  ensureStyles();
  const root = h('section', { 'data-view': 'pods', class: 'view wl-view', 'aria-labelledby': 'pods-title' });
  const heading = h('h1', { id: 'pods-title' }, 'Pods',
    node ? h('span', { class: 'muted' }, ` on node ${node}`) : routeFields ? h('span', { class: 'muted' }, ` with ${routeFields}`) : null);
  const filterNote = h('p', { class: 'view-status', role: 'status' });
  const status = h('p', { class: 'view-status bad-text', 'data-watch-error': '', role: 'alert', hidden: true });
  const loading = h('p', { class: 'view-status', 'data-loading': '' }, 'Loading…');
  const tbl = table({
    columns: podColumns(ctx.namespace),
    key: (p) => `${p.metadata.namespace}/${p.metadata.name}`,
    onOpen: (p) => ctx.navigate(podHash(p)),
    empty: node ? `No pods on node ${node}.` : 'No pods match.',
    label: 'Pods',
  });
  root.append(heading, filterNote, status, loading, tbl.el);
  clear(outlet).appendChild(root);

  function describeFilter() {
    const parts = [];
    if (search.labelSelector) parts.push(`labels ${search.labelSelector}`);
    if (search.fieldSelector) parts.push(`fields ${search.fieldSelector}`);
    if (search.name) parts.push(`names containing “${search.name}”`);
    filterNote.textContent = parts.length ? `Showing pods with ${parts.join(' and ')}.` : '';
    filterNote.hidden = !parts.length;
  }

  function start() {
    const query = selectorQuery(search, routeFields);
    watch = watchList(resourcePath({ version: 'v1', resource: 'pods', namespace: ctx.namespace }), {
      query,
      onUpdate: (items) => {
        status.hidden = true;
        loading.hidden = true;
        tbl.setItems(items);
        markUpdated(root);
      },
      onError: (e) => {
        status.textContent = e.message;
        status.hidden = false;
        loading.hidden = true;
      },
    });
  }

  const applyName = () => {
    const n = search.name;
    tbl.setFilter(n ? (p) => p.metadata.name.toLowerCase().includes(n) : null);
  };

  const offSearch = ctx.onSearch ? ctx.onSearch((text) => {
    const next = parseSearch(text);
    const restart = !sameSelectors(next, search);
    search = next;
    describeFilter();
    applyName();
    if (restart) {
      watch.stop();
      tbl.setItems([]);
      loading.hidden = false;
      start();
    }
    markUpdated(root);
  }) : null;

  describeFilter();
  applyName();
  start();
  const ticker = setInterval(() => tbl.refresh && tbl.refresh(), AGE_REFRESH_MS);

  return () => {
    clearInterval(ticker);
    if (watch) watch.stop();
    if (typeof offSearch === 'function') offSearch();
  };
}
