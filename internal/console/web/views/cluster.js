// The cluster view: nodes with their conditions, taints and requests against
// allocatable, a map of which pods run on which node, recent Warning events
// and the control plane's health as /readyz and /metrics tell it.

import { watchList, canI, request, get, discovery, ApiError } from '../lib/api.js';
import { h, clear, age, markUpdated, parseQuantity, formatBytes, formatCPU } from '../lib/dom.js';
import { table } from '../lib/table.js';

const MAP_SQ = 8; // a pod's square in the map, px
const MAP_GAP = 2;
const MAP_COLS = 16;
const EVENTS_SHOWN = 500;

export function mount(outlet, ctx) {
  const root = h('div', { 'data-view': 'cluster', class: 'view' });
  outlet.appendChild(root);
  const stops = [];
  let nodes = [];
  let pods = [];
  let selected = '';
  let stopped = false;
  let perNode = new Map(); // node name → {cpu, memory, count} requested
  let usage = new Map(); // node name → {cpu, memory} in use, from metrics.k8s.io

  const nodeError = h('p', { class: 'bad-text', hidden: true });
  const nodesTable = table({
    label: 'Nodes',
    key: (n) => n.metadata.name,
    onOpen: (n) => { selected = n.metadata.name; renderDetail(); },
    empty: 'No nodes.',
    columns: [
      { title: 'Name', value: (n) => n.metadata.name, width: 'minmax(10em, 1.4fr)' },
      { title: 'Status', value: nodeStatusCell, sort: (n) => nodeStatus(n), width: 'minmax(8em, 1.1fr)' },
      { title: 'Roles', value: roles, width: 'minmax(5em, 0.6fr)' },
      { title: 'Taints', value: (n) => taints(n) || '<none>', width: 'minmax(7em, 1.1fr)' },
      { title: 'CPU', value: (n) => usageCell(n, 'cpu'), sort: (n) => ratio(n, 'cpu'), width: 'minmax(10.5em, 1fr)' },
      { title: 'Memory', value: (n) => usageCell(n, 'memory'), sort: (n) => ratio(n, 'memory'), width: 'minmax(11.5em, 1fr)' },
      { title: 'Pods', value: (n) => `${(perNode.get(n.metadata.name) || {}).count || 0}/${(n.status.allocatable || {}).pods || '?'}`, sort: (n) => (perNode.get(n.metadata.name) || {}).count || 0, width: '5.5em' },
      { title: 'Version', value: (n) => (n.status.nodeInfo || {}).kubeletVersion || '', width: 'minmax(5em, 0.6fr)' },
      { title: 'Age', value: (n) => age(n.metadata.creationTimestamp), sort: (n) => -Date.parse(n.metadata.creationTimestamp), width: '5.5em' },
    ],
  });
  nodesTable.el.style.setProperty('--vt-max-height', '40vh');
  const detail = h('div', { class: 'node-detail' });
  // A click on a pod's square opens the pod; the squares are too many to
  // be focusable, so the pods view is the keyboard's way to them.
  const mapEl = h('div', {
    class: 'node-map', role: 'list', 'aria-label': 'Pods on each node',
    onclick: (e) => {
      const sq = e.target.closest && e.target.closest('[data-pod]');
      if (sq) ctx.navigate(`#/pods/${sq.getAttribute('data-pod').split('/').map(encodeURIComponent).join('/')}`);
    },
  });
  const mapNote = h('span', { class: 'muted' });
  const eventsError = h('p', { class: 'bad-text', hidden: true });
  const eventsTable = table({
    label: 'Warning events',
    key: (e) => `${e.metadata.namespace}/${e.metadata.name}`,
    onOpen: (e) => openInvolved(e),
    empty: 'No warning events.',
    columns: [
      { title: 'Last seen', value: (e) => age(eventTime(e)), sort: (e) => -Date.parse(eventTime(e) || 0), width: '6.8em' },
      { title: 'Namespace', value: (e) => e.metadata.namespace || '', width: 'minmax(6em, 0.6fr)' },
      { title: 'Object', value: (e) => { const o = e.involvedObject || e.regarding || {}; return `${(o.kind || '').toLowerCase()}/${o.name || ''}`; }, width: 'minmax(8em, 1fr)' },
      { title: 'Reason', value: (e) => e.reason || '', width: 'minmax(6em, 0.7fr)' },
      { title: 'Message', value: (e) => h('span', { title: e.message || e.note || '' }, e.message || e.note || ''), width: 'minmax(12em, 3fr)' },
      { title: 'Count', value: (e) => String(e.count || (e.series && e.series.count) || 1), sort: (e) => e.count || 1, width: '4.8em' },
    ],
  });
  eventsTable.el.style.setProperty('--vt-max-height', '32vh');
  const healthEl = h('div', { class: 'health' }, h('p', { class: 'muted' }, 'Asking the API server\u2026'));

  root.append(
    h('h1', null, 'Cluster'),
    h('section', { class: 'panel', 'aria-labelledby': 'cl-nodes' },
      h('h2', { id: 'cl-nodes' }, 'Nodes', h('span', { class: 'muted' }, 'bars: requests of allocatable; a mark: in use, when metrics exist')),
      nodeError, nodesTable.el, detail),
    h('section', { class: 'panel', 'aria-labelledby': 'cl-map' },
      h('h2', { id: 'cl-map' }, 'Pods on nodes ', mapNote),
      h('p', { class: 'legend' },
        h('span', null, h('i', { class: 'running' }), 'Running and ready'),
        h('span', null, h('i', { class: 'notready' }), 'Running, not ready'),
        h('span', null, h('i', { class: 'pending' }), 'Pending'),
        h('span', null, h('i', { class: 'failed' }), 'Failed'),
        h('span', null, h('i', { class: 'succeeded' }), 'Succeeded or unknown')),
      mapEl),
    h('div', { class: 'grid-2 wide-first' },
      h('section', { class: 'panel', 'aria-labelledby': 'cl-events' },
        h('h2', { id: 'cl-events' }, 'Recent warning events'),
        eventsError, eventsTable.el),
      h('section', { class: 'panel', 'aria-labelledby': 'cl-health' },
        h('h2', { id: 'cl-health' }, 'Control plane'),
        healthEl)),
  );

  // openInvolved goes to the page of the object an event is about: the
  // views made for its kind, else the generic resource view.
  async function openInvolved(e) {
    const o = e.involvedObject || e.regarding || {};
    const ns = o.namespace || e.metadata.namespace || '';
    const enc = encodeURIComponent;
    const workloadKinds = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets', ReplicaSet: 'replicasets', Job: 'jobs', CronJob: 'cronjobs' };
    if (o.kind === 'Pod') { ctx.navigate(`#/pods/${enc(ns)}/${enc(o.name)}`); return; }
    if (workloadKinds[o.kind]) { ctx.navigate(`#/workloads/${workloadKinds[o.kind]}/${enc(ns)}/${enc(o.name)}`); return; }
    if (o.kind === 'Node') { selected = o.name; renderDetail(); detail.scrollIntoView({ block: 'nearest' }); return; }
    const [g, v] = (o.apiVersion || 'v1').includes('/') ? o.apiVersion.split('/') : ['core', o.apiVersion || 'v1'];
    try {
      const r = (await discovery()).find((x) => (x.group || 'core') === g && x.kind === o.kind);
      if (!r) return;
      ctx.navigate(`#/resources/${g}/${v}/${r.resource}/${r.namespaced ? `${enc(ns)}/` : ''}${enc(o.name)}`);
    } catch { /* no discovery: stay */ }
  }

  // Requests per node, from the non-terminated pods bound to it, as
  // kubectl describe node adds them up. Each pod's sums are kept with the
  // pod object, which watchList replaces on every change.
  const podSums = new WeakMap();
  function sums(p) {
    let s = podSums.get(p);
    if (s) return s;
    s = { cpu: 0, memory: 0 };
    const spec = p.spec || {};
    for (const c of spec.containers || []) {
      const r = (c.resources && c.resources.requests) || {};
      s.cpu += parseQuantity(r.cpu);
      s.memory += parseQuantity(r.memory);
    }
    // An init container runs alone, so it counts only when it asks for more.
    for (const c of spec.initContainers || []) {
      const r = (c.resources && c.resources.requests) || {};
      if (c.restartPolicy === 'Always') {
        s.cpu += parseQuantity(r.cpu);
        s.memory += parseQuantity(r.memory);
      } else {
        s.cpu = Math.max(s.cpu, parseQuantity(r.cpu));
        s.memory = Math.max(s.memory, parseQuantity(r.memory));
      }
    }
    const oh = spec.overhead || {};
    s.cpu += parseQuantity(oh.cpu);
    s.memory += parseQuantity(oh.memory);
    podSums.set(p, s);
    return s;
  }
  function computePerNode() {
    const m = new Map();
    for (const p of pods) {
      const node = p.spec && p.spec.nodeName;
      if (!node) continue;
      const phase = (p.status && p.status.phase) || '';
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      let e = m.get(node);
      if (!e) { e = { cpu: 0, memory: 0, count: 0 }; m.set(node, e); }
      const s = sums(p);
      e.cpu += s.cpu;
      e.memory += s.memory;
      e.count++;
    }
    const changed = [];
    for (const [node, e] of m) {
      const o = perNode.get(node);
      if (!o || o.cpu !== e.cpu || o.memory !== e.memory || o.count !== e.count) changed.push(node);
    }
    for (const node of perNode.keys()) if (!m.has(node)) changed.push(node);
    perNode = m;
    return changed;
  }
  function ratio(n, res) {
    const alloc = parseQuantity((n.status.allocatable || {})[res]);
    const used = (perNode.get(n.metadata.name) || {})[res] || 0;
    return alloc ? used / alloc : 0;
  }
  function usageCell(n, res) {
    const alloc = parseQuantity((n.status.allocatable || {})[res]);
    const used = (perNode.get(n.metadata.name) || {})[res] || 0;
    const r = alloc ? used / alloc : 0;
    const fmt = res === 'cpu' ? formatCPU : formatBytes;
    const pct = Math.round(r * 100);
    const live = (usage.get(n.metadata.name) || {})[res];
    const liveText = live === undefined ? '' : `; ${fmt(live)} in use (${alloc ? Math.round((live / alloc) * 100) : 0}%)`;
    return h('span', { class: 'usage', title: `${fmt(used)} requested of ${fmt(alloc)} allocatable (${pct}%)${liveText}` },
      h('span', { class: `bar ${r > 0.9 ? 'bad' : r > 0.7 ? 'warn' : ''}`, role: 'img', 'aria-label': `${pct}% requested` },
        h('span', { style: { width: `${Math.min(100, pct)}%` } }),
        live === undefined ? null : h('i', { class: 'bar-live', style: { left: `${Math.min(100, alloc ? (live / alloc) * 100 : 0)}%` } })),
      h('small', null, `${fmt(used)}/${fmt(alloc)}`));
  }

  function renderDetail() {
    clear(detail);
    const n = nodes.find((x) => x.metadata.name === selected);
    if (!n) return;
    const conds = (n.status.conditions || []).map((c) => h('tr', null,
      h('td', null, c.type),
      h('td', { class: condClass(c) }, c.status),
      h('td', null, c.reason || ''),
      h('td', null, age(c.lastTransitionTime)),
      h('td', null, c.message || '')));
    const st = n.status || {};
    detail.append(h('div', { class: 'panel', 'data-node-detail': n.metadata.name, style: { marginTop: '12px' } },
      h('div', { class: 'toolbar' },
        h('h3', { style: { margin: 0 } }, n.metadata.name),
        h('span', { class: 'spacer' }),
        h('a', { href: `#/resources/core/v1/nodes/${encodeURIComponent(n.metadata.name)}` }, 'YAML'),
        h('button', { type: 'button', class: 'btn small', onclick: () => { selected = ''; clear(detail); } }, 'Close')),
      h('table', { class: 'plain' },
        h('thead', null, h('tr', null, ['Condition', 'Status', 'Reason', 'Since', 'Message'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, conds)),
      h('dl', { class: 'kv', style: { marginTop: '8px' } },
        h('dt', null, 'Addresses'), h('dd', null, (st.addresses || []).map((a) => `${a.type} ${a.address}`).join(', ') || '<none>'),
        h('dt', null, 'Capacity'), h('dd', null, quantities(st.capacity)),
        h('dt', null, 'Allocatable'), h('dd', null, quantities(st.allocatable)),
        h('dt', null, 'Taints'), h('dd', null, taints(n) || '<none>'),
        h('dt', null, 'OS / runtime'), h('dd', null, `${(st.nodeInfo || {}).osImage || ''} / ${(st.nodeInfo || {}).containerRuntimeVersion || ''}`))));
  }

  // The map: one box per node, one square per pod. Boxes are only redrawn
  // when a pod on their node changed, and only filled once scrolled into
  // view, so thousands of nodes and 150,000 pods stay cheap.
  const boxes = new Map(); // node name → {el, svg, dirty, visible}
  const podsByNode = new Map();
  const visibility = typeof IntersectionObserver !== 'undefined'
    ? new IntersectionObserver((entries) => {
      for (const en of entries) {
        const b = boxes.get(en.target.dataset.node);
        if (!b) continue;
        b.visible = en.isIntersecting;
        if (b.visible && b.dirty) drawBox(en.target.dataset.node, b);
      }
    }, { root: mapEl, rootMargin: '200px' })
    : null;

  function inScope(p) {
    return !ctx.namespace || p.metadata.namespace === ctx.namespace;
  }
  function groupPods() {
    podsByNode.clear();
    for (const p of pods) {
      if (!inScope(p)) continue;
      const node = (p.spec && p.spec.nodeName) || '';
      let l = podsByNode.get(node);
      if (!l) { l = []; podsByNode.set(node, l); }
      l.push(p);
    }
  }
  // drawBox brings a node's squares up to date in place: a square whose pod
  // changed gets its new class and title, so a burst of status changes
  // touches attributes, not thousands of new elements.
  function drawBox(name, b) {
    const list = podsByNode.get(name) || [];
    const rows = Math.max(1, Math.ceil(list.length / MAP_COLS));
    const step = MAP_SQ + MAP_GAP;
    if (!b.svg) {
      b.svg = h('svg:svg', { role: 'img' });
      b.rects = [];
      b.el.appendChild(b.svg);
    }
    b.svg.setAttribute('width', String(MAP_COLS * step));
    b.svg.setAttribute('height', String(rows * step));
    b.svg.setAttribute('aria-label', `${list.length} pods`);
    list.forEach((p, i) => {
      const id = `${p.metadata.namespace}/${p.metadata.name}`;
      const state = podState(p);
      let r = b.rects[i];
      if (!r) {
        r = h('svg:rect', {
          x: (i % MAP_COLS) * step, y: Math.floor(i / MAP_COLS) * step, width: MAP_SQ, height: MAP_SQ, rx: 1.5,
        });
        r.appendChild(h('svg:title'));
        b.svg.appendChild(r);
        b.rects.push(r);
      }
      if (r.__id !== id || r.__state !== state) {
        r.__id = id;
        r.__state = state;
        r.setAttribute('class', `pod-sq ${state}`);
        r.setAttribute('data-pod', id);
        r.firstChild.textContent = `${id} (${state})`;
      }
    });
    while (b.rects.length > list.length) b.rects.pop().remove();
    b.dirty = false;
    b.count.textContent = String(list.length);
  }
  function boxFor(name, notReady) {
    let b = boxes.get(name);
    if (!b) {
      const count = h('span', { class: 'muted' });
      const el = h('div', { class: 'node-box', role: 'listitem', 'data-node': name },
        h('header', null, h('b', { title: name }, name || 'not scheduled'), count));
      b = { el, svg: null, rects: [], dirty: true, visible: !visibility, count };
      boxes.set(name, b);
      if (visibility) visibility.observe(el);
    }
    b.el.classList.toggle('notready', !!notReady);
    return b;
  }
  function renderMap(events) {
    groupPods();
    const names = nodes.map((n) => n.metadata.name);
    // Nodes the user may not list (or not yet listed) still get a box from
    // their pods' nodeName.
    const known = new Set(names);
    const extra = [...podsByNode.keys()].filter((n) => n && !known.has(n)).sort();
    names.push(...extra);
    // With a namespace chosen, only the nodes running its pods: thousands of
    // empty boxes would hide the few that matter.
    const allNodes = names.length;
    if (ctx.namespace) {
      const withPods = names.filter((n) => podsByNode.has(n));
      names.length = 0;
      names.push(...withPods);
    }
    if (podsByNode.has('')) names.push('');
    // Which boxes to redraw: all after a list, else those whose pods moved.
    let dirtyAll = !events || events.some((e) => e.type === 'LIST');
    const dirty = new Set();
    if (!dirtyAll) for (const e of events) if (e.object) dirty.add((e.object.spec && e.object.spec.nodeName) || '');
    const keep = new Set(names);
    for (const [name, b] of boxes) {
      if (!keep.has(name)) { if (visibility) visibility.unobserve(b.el); b.el.remove(); boxes.delete(name); }
    }
    const ready = new Map(nodes.map((n) => [n.metadata.name, nodeStatus(n).startsWith('Ready')]));
    for (const n of extra) ready.set(n, true); // unknown, not known bad
    let prev = null;
    for (const name of names) {
      const b = boxFor(name, name !== '' && !ready.get(name));
      if (dirtyAll || dirty.has(name) || !b.svg) b.dirty = true;
      // Reserve the box's height before it is drawn, so the scroll bar is right.
      const rows = Math.max(1, Math.ceil(((podsByNode.get(name) || []).length) / MAP_COLS));
      b.el.style.minHeight = `${rows * (MAP_SQ + MAP_GAP) + 26}px`;
      if (b.dirty && b.visible) drawBox(name, b);
      if (!b.dirty) b.count.textContent = String((podsByNode.get(name) || []).length);
      const want = prev ? prev.nextSibling : mapEl.firstChild;
      if (want !== b.el) mapEl.insertBefore(b.el, want);
      prev = b.el;
    }
    let total = 0;
    for (const name of names) total += (podsByNode.get(name) || []).length;
    const unscheduled = (podsByNode.get('') || []).length;
    const unscheduledBox = podsByNode.has('');
    const shownNodes = names.length - (unscheduledBox ? 1 : 0);
    mapNote.textContent = `${plural(total, 'pod')}${ctx.namespace ? ` in ${ctx.namespace}` : ''} on ${ctx.namespace ? `${shownNodes} of ${plural(allNodes, 'node')}` : plural(shownNodes, 'node')}`
      + (unscheduled ? `, ${unscheduled} not scheduled` : '');
  }

  // Search: text with '=' (or '!', 'in (') is a label selector the server
  // applies to the nodes; anything else filters nodes by name here.
  let search = ctx.search || '';
  let nodesWatch = null;
  function startNodes() {
    if (nodesWatch) nodesWatch.stop();
    const isSelector = /[=!]|\sin\s|\snotin\s/.test(search);
    nodesTable.setFilter(search && !isSelector ? (n) => n.metadata.name.includes(search) : null);
    nodesWatch = watchList('/api/v1/nodes', {
      query: { labelSelector: isSelector ? search : undefined },
      onUpdate: (items) => {
        nodeError.hidden = true;
        nodes = items;
        nodesTable.setItems(nodes);
        renderMap(null);
        if (selected) renderDetail();
        markUpdated(root);
      },
      onError: (e) => { nodeError.hidden = false; nodeError.textContent = e.message; if (!nodes.length) nodesTable.setItems([]); },
    });
  }
  startNodes();
  stops.push(() => nodesWatch && nodesWatch.stop());
  stops.push(ctx.onSearch((text) => { search = text; startNodes(); }));

  // Pods: every pod in the cluster when the user may list them (requests
  // per node need them all), else the chosen namespace's.
  (async () => {
    const all = await canI('list', { resource: 'pods' });
    if (stopped) return;
    const path = all || !ctx.namespace ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(ctx.namespace)}/pods`;
    const w = watchList(path, {
      onUpdate: (items, _ev, events) => {
        pods = items;
        // Only the nodes whose sums moved are redrawn in the table.
        nodesTable.refresh(computePerNode());
        renderMap(events);
        markUpdated(root);
      },
      onError: (e) => { mapNote.textContent = e.message; },
    });
    stops.push(() => w.stop());
  })();

  const eventsPath = ctx.namespace ? `/api/v1/namespaces/${encodeURIComponent(ctx.namespace)}/events` : '/api/v1/events';
  const ew = watchList(eventsPath, {
    query: { fieldSelector: 'type=Warning' },
    onUpdate: (items) => {
      eventsError.hidden = true;
      const sorted = items.slice().sort((a, b) => (Date.parse(eventTime(b)) || 0) - (Date.parse(eventTime(a)) || 0));
      eventsTable.setItems(sorted.slice(0, EVENTS_SHOWN));
      markUpdated(root);
    },
    onError: (e) => { eventsError.hidden = false; eventsError.textContent = e.message; if (!eventsTable.items.length) eventsTable.setItems([]); },
  });
  stops.push(() => ew.stop());

  // The control plane: /readyz?verbose is public; /metrics needs a grant,
  // and its etcd figures are shown only when the server exports them.
  let healthRound = 0;
  let storageEl = null;
  async function health() {
    const parts = [];
    try {
      const text = await request('GET', '/readyz', { query: { verbose: 1 }, accept: 'text/plain' });
      parts.push(readyzList(text, true));
    } catch (e) {
      if (e instanceof ApiError && e.status === 503 && e.message) parts.push(readyzList(e.message, false));
      else parts.push(h('p', { class: 'bad-text' }, `readyz: ${e.message}`));
    }
    // /metrics is a third of a megabyte: read every third round.
    if (healthRound++ % 3 === 0) {
      try {
        const text = await request('GET', '/metrics', { accept: 'text/plain' });
        storageEl = storageFigures(text);
      } catch { storageEl = null; /* not allowed to read metrics: show nothing of them */ }
    }
    if (storageEl) parts.push(storageEl);
    if (stopped) return;
    clear(healthEl).append(...parts);
  }
  // Usage, once the metrics API serves nodes: it has no watch, so it is
  // asked again at the metrics' own pace.
  let usageTimer = 0;
  discovery().then((all) => {
    const m = all.find((r) => r.group === 'metrics.k8s.io' && r.resource === 'nodes');
    if (!m || stopped) return;
    const poll = async () => {
      try {
        const list = await get(`/apis/metrics.k8s.io/${m.version}/nodes`);
        usage = new Map((list.items || []).map((i) => [i.metadata.name, {
          cpu: parseQuantity((i.usage || {}).cpu), memory: parseQuantity((i.usage || {}).memory),
        }]));
        if (!stopped) nodesTable.refresh();
      } catch { /* no grant or no metrics yet: requests alone */ }
    };
    poll();
    usageTimer = setInterval(poll, 15000);
  }).catch(() => {});
  stops.push(() => clearInterval(usageTimer));

  health();
  const healthTimer = setInterval(health, 10000);
  const ageTimer = setInterval(() => { nodesTable.refresh(); eventsTable.refresh(); }, 30000);
  stops.push(() => { clearInterval(healthTimer); clearInterval(ageTimer); });

  return () => {
    stopped = true;
    if (visibility) visibility.disconnect();
    stops.forEach((s) => s());
  };
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function eventTime(e) {
  return e.lastTimestamp || e.eventTime || (e.series && e.series.lastObservedTime) || e.firstTimestamp || e.metadata.creationTimestamp;
}

// nodeStatus is kubectl's STATUS column: Ready or NotReady from the Ready
// condition (Unknown when it has none), then SchedulingDisabled.
function nodeStatus(n) {
  const ready = (n.status.conditions || []).find((c) => c.type === 'Ready');
  const out = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (n.spec.unschedulable) out.push('SchedulingDisabled');
  return out.join(',');
}

function nodeStatusCell(n) {
  const s = nodeStatus(n);
  const pressure = (n.status.conditions || []).filter((c) => c.type !== 'Ready' && c.status === 'True');
  return h('span', { title: pressure.map((c) => `${c.type}: ${c.message || c.reason || ''}`).join('\n') || s },
    h('span', { class: s.startsWith('Ready') ? 'status-ok' : 'status-bad' }, s),
    pressure.map((c) => h('span', { class: 'badge warn', style: { marginLeft: '4px' } }, c.type)));
}

function condClass(c) {
  if (c.type === 'Ready') return c.status === 'True' ? 'status-ok' : 'status-bad';
  return c.status === 'False' ? 'status-ok' : 'status-warn';
}

function roles(n) {
  const out = [];
  for (const [k, v] of Object.entries(n.metadata.labels || {})) {
    if (k.startsWith('node-role.kubernetes.io/')) out.push(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role') out.push(v);
  }
  return out.length ? out.sort().join(',') : '<none>';
}

function taints(n) {
  return (n.spec.taints || []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ');
}

function quantities(q) {
  return Object.entries(q || {}).map(([k, v]) => `${k}: ${v}`).join(', ') || '<none>';
}

// podState is the map's colour: phase, and readiness for running pods.
function podState(p) {
  const st = p.status || {};
  if (p.metadata.deletionTimestamp) return 'notready';
  switch (st.phase) {
    case 'Running': {
      const ready = (st.conditions || []).find((c) => c.type === 'Ready');
      return ready && ready.status === 'True' ? 'running' : 'notready';
    }
    case 'Pending': return 'pending';
    case 'Failed': return 'failed';
    case 'Succeeded': return 'succeeded';
    default: return 'unknown';
  }
}

function readyzList(text, ok) {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const checks = lines.filter((l) => l.startsWith('[+]') || l.startsWith('[-]'));
  const verdict = lines.find((l) => /check (passed|failed)/.test(l)) || (ok ? 'readyz check passed' : 'readyz check failed');
  return h('div', { 'data-health': '' },
    h('p', { class: ok ? 'status-ok' : 'status-bad' }, h('b', null, verdict)),
    h('ul', { class: 'health-list' }, checks.map((l) => h('li', { class: l.startsWith('[+]') ? '' : 'status-bad' }, l))));
}

// storageFigures picks the storage and etcd lines out of the Prometheus
// text: the database size per storage, and the etcd_* gauges that exist.
function storageFigures(text) {
  const rows = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const [, name, labels = '', value] = m;
    const v = Number(value);
    if (name === 'apiserver_storage_db_total_size_in_bytes' || name === 'apiserver_storage_size_bytes') {
      rows.push(['Database size', `${formatBytes(v)}${labels ? ` ${labels}` : ''}`]);
    } else if (name === 'etcd_server_has_leader') {
      rows.push(['etcd has a leader', v === 1 ? 'yes' : 'no']);
    } else if (name === 'etcd_server_is_leader') {
      rows.push(['This server is the leader', v === 1 ? 'yes' : 'no']);
    } else if (name === 'etcd_mvcc_db_total_size_in_bytes' || name === 'orca_etcd_db_total_size_bytes') {
      rows.push(['etcd database size', formatBytes(v)]);
    } else if (name === 'orca_etcd_db_total_size_in_use_bytes') {
      rows.push(['etcd database in use', formatBytes(v)]);
    } else if (name === 'etcd_server_leader_changes_seen_total') {
      rows.push(['Leader changes seen', String(v)]);
    } else if (name === 'orca_etcd_last_snapshot_timestamp_seconds') {
      rows.push(['Last snapshot', v ? `${age(v * 1000)} ago` : 'none yet']);
    } else if (name === 'orca_etcd_snapshots_total') {
      rows.push(['Scheduled snapshots saved', String(v)]);
    } else if (name === 'orca_etcd_compactions_total') {
      rows.push(['Compactions', String(v)]);
    } else if (name === 'orca_etcd_defragmentations_total') {
      rows.push(['Defragmentations', String(v)]);
    }
  }
  if (!rows.length) return null;
  return h('dl', { class: 'kv', 'data-etcd': '', style: { marginTop: '10px' } }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}
