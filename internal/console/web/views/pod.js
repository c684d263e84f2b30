// The pod view (#/pods/NS/NAME[/logs|/shell]): status, containers,
// conditions and events, the scheduler's account of the pod's placement or
// of why it is Pending, live logs with search, and a shell drawn by the
// vendored xterm.js over the API's exec WebSocket. Everything is live from
// watches; each tab and action shows only for a user allowed to use it.

import { watchList, canI, resourcePath, get, patch, request, streamLogs, openExec } from '../lib/api.js';
import { h, clear, age, markUpdated, showError, clearError, toast } from '../lib/dom.js';
import { podSummary, podIP, statusClass, mount as mountPods } from './pods.js';
import { conditionsTable, eventsPanel, deleteWithPolicy, field, labelsText, OWNER_ROUTES } from './workload.js';
import { ensureStyles } from './workloads.js';

const EXPLAIN_REQUEST = 'scheduler.orca.io/explain';
const EXPLANATION = 'scheduler.orca.io/explanation';
const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';
const TAIL_LINES = 500;
// The page keeps this many log lines; older ones scroll away for good.
const MAX_LINES = 10000;
// The pauses (ms) before a followed log stream the network cut is opened
// again; after as many cuts in a row without a line between, the error
// is shown.
const LOG_REOPENS = [500, 1000, 2000, 4000, 8000];

// stateText words a container state as kubectl describe does.
function stateText(state) {
  if (!state) return 'Waiting';
  if (state.running) return `Running, started ${age(state.running.startedAt)} ago`;
  if (state.waiting) return `Waiting: ${state.waiting.reason || ''}${state.waiting.message ? ` (${state.waiting.message})` : ''}`;
  if (state.terminated) {
    const t = state.terminated;
    return `Terminated: ${t.reason || ''} (exit code ${t.exitCode ?? 0}${t.signal ? `, signal ${t.signal}` : ''})${t.message ? `: ${t.message}` : ''}`;
  }
  return 'Waiting';
}

function stateClass(state, ready) {
  if (state && state.running) return ready ? 'ok-text' : 'warn-text';
  if (state && state.terminated) return state.terminated.exitCode === 0 ? 'ok-text' : 'bad-text';
  if (state && state.waiting && /BackOff|Err|Invalid/.test(state.waiting.reason || '')) return 'bad-text';
  return 'warn-text';
}

function lastTermination(cs) {
  const t = cs && cs.lastState && cs.lastState.terminated;
  if (!t) return '';
  return `${t.reason || 'Terminated'}, exit code ${t.exitCode ?? 0}${t.finishedAt ? `, ${age(t.finishedAt)} ago` : ''}`;
}

// containerRows pairs every container of the spec with its status, init
// containers first as the pod runs them.
function containerRows(pod) {
  const st = pod.status || {};
  const rows = [];
  const add = (list, statuses, kind) => {
    const by = new Map((statuses || []).map((s) => [s.name, s]));
    for (const c of list || []) rows.push({ c, s: by.get(c.name), kind });
  };
  add(pod.spec.initContainers, st.initContainerStatuses, 'init');
  add(pod.spec.containers, st.containerStatuses, '');
  add(pod.spec.ephemeralContainers, st.ephemeralContainerStatuses, 'ephemeral');
  return rows;
}

function containersTable(pod) {
  return h('table', { class: 'plain', 'data-containers': '' },
    h('thead', null, h('tr', null, ['Name', 'Image', 'State', 'Ready', 'Restarts', 'Last termination'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, containerRows(pod).map(({ c, s, kind }) => h('tr', { 'data-container': c.name },
      h('td', null, c.name, kind ? h('span', { class: 'badge' }, ` ${kind}${kind === 'init' && c.restartPolicy === 'Always' ? ' (sidecar)' : ''}`) : null),
      h('td', { class: 'mono' }, c.image),
      h('td', { class: stateClass(s && s.state, s && s.ready) }, stateText(s && s.state)),
      h('td', null, s ? String(!!s.ready) : 'false'),
      h('td', null, String((s && s.restartCount) || 0)),
      h('td', null, lastTermination(s) || '<none>')))));
}

// The scheduler's explanation comes from the pod's annotation, written
// when the pod asks for one, else from the pods/explanation subresource
// (the scheduler's recent memory), as `orca explain` reads it.
function explanationFromPod(pod) {
  const raw = pod.metadata.annotations && pod.metadata.annotations[EXPLANATION];
  if (!raw) return null;
  try {
    const e = JSON.parse(raw);
    if (e.uid && e.uid !== pod.metadata.uid) return null; // copied onto a new pod
    return e;
  } catch {
    return null;
  }
}

function explanationView(e) {
  const parts = [
    h('p', { 'data-explanation-result': e.result },
      h('strong', null, e.result === 'Scheduled' ? `Scheduled on ${e.node}` : e.result),
      ` — ${e.evaluated} of ${e.nodes} nodes evaluated, ${e.feasible} feasible`,
      e.time ? `, ${age(e.time)} ago` : ''),
  ];
  if (e.message) parts.push(h('p', { class: 'mono' }, e.message));
  if (e.preFilter) {
    parts.push(h('p', null, `Rejected on every node by ${e.preFilter.plugin} (${e.preFilter.code}): ${e.preFilter.reason || ''}`));
  }
  if (e.reasons && e.reasons.length) {
    parts.push(h('ul', { class: 'plain-list' }, e.reasons.map((r) => h('li', null, `${r.count} ${r.reason}`))));
  }
  if (e.rejected && e.rejected.length) {
    const shown = e.rejected.slice(0, 20);
    const more = e.rejected.length - shown.length + (e.rejectedOmitted || 0);
    parts.push(h('h4', null, 'Rejected nodes, closest first'),
      h('table', { class: 'plain', 'data-rejected': '' },
        h('thead', null, h('tr', null, ['Node', 'Plugin', 'Code', 'Reason'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, shown.map((v) => h('tr', null, h('td', null, v.node), h('td', null, v.plugin), h('td', null, v.code), h('td', null, v.reason || ''))))),
      more > 0 ? h('p', { class: 'muted' }, `${more} more not shown.`) : null);
  }
  if (e.scored && e.scored.length) {
    const plugins = e.scorePlugins || [];
    const shown = e.scored.slice(0, 10);
    parts.push(h('h4', null, 'Scored nodes'),
      h('table', { class: 'plain', 'data-scored': '' },
        h('thead', null, h('tr', null, ['Rank', 'Node', 'Total', ...plugins.map((p) => `${p.name} ×${p.weight}`)].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, shown.map((s) => h('tr', null,
          h('td', null, String(s.rank)), h('td', null, s.node), h('td', null, String(s.total)),
          plugins.map((_, i) => h('td', null, String((s.weighted || [])[i] ?? '')))))),
      (e.scored.length - shown.length + (e.scoredOmitted || 0)) > 0
        ? h('p', { class: 'muted' }, `${e.scored.length - shown.length + (e.scoredOmitted || 0)} more not shown.`) : null));
  }
  return h('div', { 'data-explanation': '' }, parts);
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

let xtermCSS = false;
// loadXterm imports the vendored ES module builds only when a shell is
// opened, and their stylesheet with them.
async function loadXterm() {
  if (!xtermCSS) {
    xtermCSS = true;
    document.head.appendChild(h('link', { rel: 'stylesheet', href: new URL('../vendor/xterm.css', import.meta.url).href, 'data-xterm-css': '' }));
  }
  const [{ Terminal }, { FitAddon }] = await Promise.all([
    import('../vendor/xterm.mjs'),
    import('../vendor/addon-fit.mjs'),
  ]);
  return { Terminal, FitAddon };
}

function execEndMessage(st) {
  if (!st || st.status === 'Success') return 'The shell exited.';
  const causes = (st.details && st.details.causes) || [];
  const exit = causes.find((c) => c.reason === 'ExitCode');
  if (st.reason === 'NonZeroExitCode' && exit) return `The shell exited with code ${exit.message}.`;
  return `The shell ended: ${st.message || 'the connection closed'}`;
}

export function mount(outlet, ctx) {
  // #/pods/FIELD=VALUE is the pods list narrowed by a field selector.
  if ((ctx.params || []).length === 1 && ctx.params[0].includes('=')) return mountPods(outlet, ctx);
  const [rawNs, rawName, rawTab] = ctx.params || [];
  const namespace = decodeURIComponent(rawNs || '');
  const name = decodeURIComponent(rawName || '');
  ensureStyles();
  const root = h('section', { 'data-view': 'pod', class: 'view wl-view', 'aria-labelledby': 'pod-title' });
  clear(outlet).appendChild(root);
  if (!namespace || !name) {
    root.append(h('h1', { id: 'pod-title' }, 'Pod'), h('p', { class: 'bad-text' }, 'The route names no pod: #/pods/NAMESPACE/NAME.'));
    return () => {};
  }

  const stops = [];
  let pod = null;
  let schedEvents = [];

  // ---- frame: title, tabs, actions
  const title = h('h1', { id: 'pod-title' }, h('span', { class: 'muted' }, 'Pod '), name);
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/pods' }, 'Pods'), ' / ', namespace);
  const statusBadge = h('span', { class: 'pod-status', 'data-pod-status': '' });
  const actions = h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' });
  const missing = h('p', { class: 'bad-text', role: 'alert', hidden: true });
  const tablist = h('div', { role: 'tablist', class: 'tabs', 'aria-label': 'Pod', onkeydown: tabKey });
  const panels = {};
  const tabs = {};
  const tabOrder = [];
  const yamlLink = h('a', { href: `#/resources/core/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`, 'data-yaml-link': '' }, 'YAML');
  root.append(crumbs, h('div', { class: 'view-head' }, title, statusBadge, yamlLink, actions), missing, tablist);

  function addTab(key, label, action) {
    tabOrder.push(key);
    tabs[key] = h('button', {
      type: 'button', role: 'tab', id: `pod-tab-${key}`, 'aria-controls': `pod-panel-${key}`, 'aria-selected': 'false',
      tabindex: -1, 'data-tab': key, 'data-action': action || null, onclick: () => selectTab(key, false),
    }, label);
    panels[key] = h('div', { role: 'tabpanel', id: `pod-panel-${key}`, 'aria-labelledby': `pod-tab-${key}`, class: 'tab-panel', hidden: true });
    tablist.appendChild(tabs[key]);
    root.appendChild(panels[key]);
  }

  let currentTab = '';
  const onShow = {};
  function selectTab(key, focus) {
    if (!tabs[key]) return;
    currentTab = key;
    for (const k of tabOrder) {
      tabs[k].setAttribute('aria-selected', k === key ? 'true' : 'false');
      tabs[k].tabIndex = k === key ? 0 : -1;
      panels[k].hidden = k !== key;
    }
    if (focus) tabs[key].focus();
    if (onShow[key]) onShow[key]();
  }

  function tabKey(e) {
    const i = tabOrder.indexOf(currentTab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabOrder.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    selectTab(tabOrder[(next + tabOrder.length) % tabOrder.length], true);
  }

  // ---- overview
  addTab('overview', 'Overview');
  const summary = h('dl', { class: 'kv', 'data-summary': '' });
  const containers = h('div');
  const scheduling = h('div', { 'data-scheduling': '' });
  const conditions = h('div');
  const eventsBox = h('div', { 'data-events': '' });
  const panel = (heading, el) => h('section', { class: 'panel' }, h('h2', null, heading), el);
  panels.overview.append(
    h('div', { class: 'grid-2' }, panel('Status', summary), h('div', null, panel('Scheduling', scheduling), panel('Conditions', conditions))),
    panel('Containers', containers),
    panel('Events', eventsBox));

  const ev = eventsPanel({
    namespace, kind: 'Pod', name,
    onChange: (items) => {
      schedEvents = items.filter((e) => e.reason === 'FailedScheduling' || e.reason === 'Scheduled' || e.reason === 'Preempted');
      if (pod) renderScheduling();
      markUpdated(root);
    },
  });
  eventsBox.appendChild(ev.el);
  const evTick = setInterval(() => ev.refresh(), 10000);
  stops.push(ev.stop, () => clearInterval(evTick));

  function renderSummary() {
    const s = podSummary(pod);
    const st = pod.status || {};
    const meta = pod.metadata;
    const owner = ((meta.ownerReferences) || []).find((r) => r.controller);
    const ownerRoute = owner && OWNER_ROUTES[owner.kind];
    statusBadge.textContent = s.status;
    statusBadge.className = `pod-status ${statusClass(s.status)}`;
    const node = pod.spec.nodeName;
    const rows = [
      field('Status', h('span', { class: statusClass(s.status), 'data-status': '' }, s.status)),
      field('Ready', s.ready),
      field('Restarts', s.restarts),
      field('Phase', st.phase || ''),
      field('Node', node ? h('a', { href: `#/pods/spec.nodeName=${encodeURIComponent(node)}` }, node) : '<none> (not scheduled)'),
      field('IP', (st.podIPs && st.podIPs.length ? st.podIPs.map((x) => x.ip).join(', ') : podIP(pod)) || '<none>'),
      field('Host IP', st.hostIP || ''),
      field('QoS class', st.qosClass || ''),
      field('Created', `${age(meta.creationTimestamp)} ago (${meta.creationTimestamp})`),
      field('Started', st.startTime ? `${age(st.startTime)} ago` : ''),
      meta.deletionTimestamp ? field('Terminating', `since ${age(meta.deletionTimestamp)} ago, grace period ${meta.deletionGracePeriodSeconds ?? ''}s`) : null,
      field('Controlled by', owner ? (ownerRoute
        ? h('a', { href: `#/workloads/${ownerRoute}/${encodeURIComponent(meta.namespace)}/${encodeURIComponent(owner.name)}` }, `${owner.kind}/${owner.name}`)
        : `${owner.kind}/${owner.name}`) : ''),
      field('Service account', pod.spec.serviceAccountName || ''),
      field('Priority', pod.spec.priorityClassName ? `${pod.spec.priority ?? 0} (${pod.spec.priorityClassName})` : ''),
      field('Labels', labelsText(meta.labels)),
      st.message ? field('Message', st.message) : null,
    ];
    clear(summary);
    for (const r of rows) if (r) summary.append(...r);
  }

  // ---- scheduling: the PodScheduled condition, the scheduler's events and
  // its explanation when there is one.
  let storeExplanation = null;
  let storeAsked = '';
  let canExplain = false;
  function renderScheduling() {
    const cond = ((pod.status && pod.status.conditions) || []).find((c) => c.type === 'PodScheduled');
    const out = [];
    if (cond) {
      out.push(h('p', { 'data-pod-scheduled': cond.status },
        h('strong', null, cond.status === 'True' ? `Scheduled on ${pod.spec.nodeName || '?'}` : `Not scheduled${cond.reason ? ` (${cond.reason})` : ''}`),
        cond.lastTransitionTime ? `, ${age(cond.lastTransitionTime)} ago` : '',
        cond.message ? h('span', { class: 'mono block' }, cond.message) : null));
    } else if (pod.spec.nodeName) {
      out.push(h('p', null, `Bound to ${pod.spec.nodeName}.`));
    } else {
      out.push(h('p', null, 'Waiting for the scheduler.'));
    }
    const latest = schedEvents[0];
    if (latest && (!cond || !cond.message || latest.message !== cond.message)) {
      out.push(h('p', { 'data-scheduling-event': latest.reason },
        h('strong', null, `${latest.reason}: `), h('span', { class: 'mono' }, latest.message || '')));
    }
    const e = explanationFromPod(pod) || (storeExplanation && storeExplanation.uid === pod.metadata.uid ? storeExplanation : null);
    if (e) {
      out.push(h('h3', null, 'The scheduler\'s explanation'), explanationView(e));
    } else if (!pod.spec.nodeName) {
      const asked = pod.metadata.annotations && pod.metadata.annotations[EXPLAIN_REQUEST];
      if (asked) {
        out.push(h('p', { class: 'muted' }, 'Explanation asked for: the scheduler writes it on its next attempt for this pod.'));
      } else if (canExplain) {
        out.push(h('p', null,
          h('button', { type: 'button', class: 'btn', 'data-action': 'explain', onclick: askExplanation }, 'Ask the scheduler to explain'),
          h('span', { class: 'muted' }, ` (annotates the pod ${EXPLAIN_REQUEST}: "true", as orca explain does)`)));
      }
    } else {
      out.push(h('p', { class: 'muted' }, `No recorded explanation: the pod was bound before one was asked for (create it with the annotation ${EXPLAIN_REQUEST}: "true" to have the scheduler record its decision).`));
    }
    clear(scheduling).append(...out);
  }

  async function askExplanation() {
    clearError();
    try {
      await patch(resourcePath({ version: 'v1', resource: 'pods', namespace, name }), { metadata: { annotations: { [EXPLAIN_REQUEST]: 'true' } } }, 'merge', { repeatable: true });
      toast(`pod/${name} annotated: the scheduler explains its next attempt`, 'info');
    } catch (e) {
      showError(e);
    }
  }

  // A bound pod without the annotation may still be in the scheduler's
  // memory: ask once per pod UID.
  function maybeFetchStore() {
    if (!pod.spec.nodeName || explanationFromPod(pod) || storeAsked === pod.metadata.uid) return;
    storeAsked = pod.metadata.uid;
    get(resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'explanation' }))
      .then((e) => { storeExplanation = e; if (pod) renderScheduling(); })
      .catch(() => { /* not kept, or not served: the condition and events stand */ });
  }

  // ---- logs
  const logs = { started: false, stream: null, lines: [], partial: '', rendered: 0, failed: false, ended: false, containerID: '', pendingFrame: 0, drops: 0 };
  const logContainer = h('select', { name: 'container', id: 'log-container', onchange: () => restartLogs(false) });
  const follow = h('input', { type: 'checkbox', name: 'follow', id: 'log-follow', checked: true, onchange: () => restartLogs(false) });
  const previous = h('input', { type: 'checkbox', name: 'previous', id: 'log-previous', onchange: () => restartLogs(false) });
  const timestamps = h('input', { type: 'checkbox', name: 'timestamps', id: 'log-timestamps', onchange: () => restartLogs(false) });
  const logSearch = h('input', { type: 'search', name: 'logsearch', id: 'log-search', placeholder: 'Search the log', 'data-log-search': '', oninput: () => renderLogs(true) });
  const onlyMatching = h('input', { type: 'checkbox', name: 'filter', id: 'log-filter', onchange: () => renderLogs(true) });
  const logCount = h('span', { class: 'muted', 'aria-live': 'polite', 'data-log-matches': '' });
  const logStatus = h('p', { class: 'view-status', 'data-logs-status': '', role: 'status' });
  const pre = h('pre', { class: 'logs mono', 'data-logs': '', tabindex: 0, 'aria-label': 'Log lines' });
  const logControls = h('div', { class: 'toolbar' },
    h('label', { for: 'log-container' }, 'Container '), logContainer,
    h('span', { class: 'field-check' }, follow, h('label', { for: 'log-follow' }, ' Follow')),
    h('span', { class: 'field-check' }, previous, h('label', { for: 'log-previous' }, ' Previous container')),
    h('span', { class: 'field-check' }, timestamps, h('label', { for: 'log-timestamps' }, ' Timestamps')),
    h('label', { for: 'log-search', class: 'visually-hidden' }, 'Search the log'), logSearch,
    h('span', { class: 'field-check' }, onlyMatching, h('label', { for: 'log-filter' }, ' Only matching lines')),
    logCount,
    h('button', { type: 'button', class: 'btn', 'data-action': 'reload-logs', onclick: () => restartLogs(false) }, 'Reload'));

  function containerNames() {
    if (!pod) return [];
    return [
      ...(pod.spec.containers || []).map((c) => ({ name: c.name, label: c.name })),
      ...(pod.spec.initContainers || []).map((c) => ({ name: c.name, label: `${c.name} (init)` })),
      ...(pod.spec.ephemeralContainers || []).map((c) => ({ name: c.name, label: `${c.name} (ephemeral)` })),
    ];
  }

  function defaultContainer() {
    const want = pod.metadata.annotations && pod.metadata.annotations[DEFAULT_CONTAINER];
    const names = containerNames().map((c) => c.name);
    return names.includes(want) ? want : names[0] || '';
  }

  function fillContainerSelect(select) {
    const names = containerNames();
    const have = Array.from(select.options).map((o) => o.value).join('\n');
    if (have === names.map((c) => c.name).join('\n')) return;
    const keep = select.value || defaultContainer();
    clear(select);
    for (const c of names) select.appendChild(h('option', { value: c.name, selected: c.name === keep }, c.label));
  }

  function atBottom() {
    return pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
  }

  function matcher() {
    const q = logSearch.value;
    return q ? new RegExp(escapeRegExp(q), 'gi') : null;
  }

  function lineNode(line, re) {
    if (!re) return document.createTextNode(`${line}\n`);
    const frag = document.createDocumentFragment();
    let last = 0;
    re.lastIndex = 0;
    let m;
    while ((m = re.exec(line)) !== null) {
      if (m[0] === '') { re.lastIndex++; continue; }
      if (m.index > last) frag.appendChild(document.createTextNode(line.slice(last, m.index)));
      frag.appendChild(h('mark', null, m[0]));
      last = m.index + m[0].length;
    }
    frag.appendChild(document.createTextNode(`${line.slice(last)}\n`));
    return frag;
  }

  // renderLogs appends the lines not yet on screen, or redraws them all
  // (full) when the search changed or old lines were dropped.
  function renderLogs(full) {
    logs.pendingFrame = 0;
    const stick = atBottom();
    const re = matcher();
    const filter = re && onlyMatching.checked;
    if (full) {
      clear(pre);
      logs.rendered = 0;
    }
    const frag = document.createDocumentFragment();
    for (let i = logs.rendered; i < logs.lines.length; i++) {
      const line = logs.lines[i];
      if (filter) {
        re.lastIndex = 0;
        if (!re.test(line)) continue;
      }
      frag.appendChild(lineNode(line, re));
    }
    logs.rendered = logs.lines.length;
    pre.appendChild(frag);
    if (re) {
      let n = 0;
      for (const l of logs.lines) { re.lastIndex = 0; if (re.test(l)) n++; }
      logCount.textContent = `${n} matching ${n === 1 ? 'line' : 'lines'}`;
    } else {
      logCount.textContent = '';
    }
    if (stick || full) pre.scrollTop = pre.scrollHeight;
    markUpdated(root);
  }

  function onLogText(text) {
    logs.drops = 0;
    const parts = (logs.partial + text).split('\n');
    logs.partial = parts.pop();
    if (!parts.length) return;
    logs.lines.push(...parts);
    let full = false;
    if (logs.lines.length > MAX_LINES) {
      logs.lines.splice(0, logs.lines.length - MAX_LINES);
      full = true;
    }
    if (full) {
      renderLogs(true);
    } else if (!logs.pendingFrame) {
      logs.pendingFrame = requestAnimationFrame(() => renderLogs(false));
    }
  }

  function stopLogs() {
    if (logs.stream) logs.stream.stop();
    logs.stream = null;
    if (logs.pendingFrame) cancelAnimationFrame(logs.pendingFrame);
    logs.pendingFrame = 0;
  }

  // restartLogs opens the log stream afresh; continued, it keeps the lines
  // on screen and goes on with a new instance of the container.
  function restartLogs(continued) {
    if (!pod) return;
    stopLogs();
    if (continued) {
      if (logs.partial) logs.lines.push(logs.partial);
      logs.lines.push(`──── ${logContainer.value} restarted ────`);
    } else {
      logs.lines = [];
    }
    logs.partial = '';
    logs.failed = false;
    logs.ended = false;
    renderLogs(!continued);
    const container = logContainer.value || defaultContainer();
    const cs = containerStatus(container);
    logs.containerID = (cs && cs.containerID) || '';
    const following = follow.checked && !previous.checked;
    logStatus.textContent = following ? `Following ${container}…` : `Loading ${container}…`;
    logStatus.classList.remove('bad-text');
    const stream = streamLogs(namespace, name, {
      container, follow: following, previous: previous.checked, tailLines: TAIL_LINES, timestamps: timestamps.checked,
    }, onLogText);
    logs.stream = stream;
    stream.done.then(() => {
      if (logs.stream !== stream) return;
      if (logs.partial) { logs.lines.push(logs.partial); logs.partial = ''; }
      renderLogs(false);
      logs.ended = following;
      logStatus.textContent = following ? `The log stream of ${container} ended (the container stopped, or the server closed it).` : `Last ${TAIL_LINES} lines of ${container}${previous.checked ? ' (previous instance)' : ''}.`;
    }, (e) => {
      if (logs.stream !== stream) return;
      // A followed stream the network dropped (the browser ends every
      // open request when the machine's interfaces change) is opened
      // again, as a user would reload: the last lines again, then on.
      // A server's refusal is shown.
      const dropped = e instanceof TypeError || (e && e.reason === 'NetworkError');
      if (following && dropped && logs.drops < LOG_REOPENS.length) {
        const wait = LOG_REOPENS[logs.drops++];
        logStatus.textContent = `The log stream of ${container} was cut; opening it again…`;
        setTimeout(() => { if (logs.stream === stream) restartLogs(false); }, wait);
        return;
      }
      logs.failed = true;
      logStatus.textContent = e.message;
      logStatus.classList.add('bad-text');
    });
  }

  // ---- shell
  const shell = { session: null, term: null, fit: null, starting: false, waitingFor: '' };
  const shellContainer = h('select', { name: 'shell-container', id: 'shell-container', onchange: () => startShell(true) });
  const shellCommand = h('input', { type: 'text', name: 'command', id: 'shell-command', value: '/bin/sh', size: 14 });
  const shellStatus = h('p', { class: 'view-status', 'data-shell-status': '', role: 'status' });
  const terminalBox = h('div', { class: 'terminal', 'data-terminal': '' });
  const connectBtn = h('button', { type: 'button', class: 'btn', 'data-action': 'connect', onclick: () => startShell(true) }, 'Connect');
  const shellControls = h('div', { class: 'toolbar' },
    h('label', { for: 'shell-container' }, 'Container '), shellContainer,
    h('label', { for: 'shell-command' }, 'Command '), shellCommand,
    connectBtn);

  const onWindowResize = () => { if (shell.fit && currentTab === 'shell') shell.fit.fit(); };
  window.addEventListener('resize', onWindowResize);
  stops.push(() => window.removeEventListener('resize', onWindowResize));

  function endShell() {
    if (shell.session) shell.session.close();
    shell.session = null;
  }

  async function startShell(reconnect) {
    if (!pod || shell.starting) return;
    if (shell.session && !reconnect) return;
    endShell();
    shell.starting = true;
    try {
      const { Terminal, FitAddon } = await loadXterm();
      if (!shell.term) {
        shell.term = new Terminal({
          cursorBlink: true, convertEol: false, scrollback: 5000,
          fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 14,
        });
        shell.fit = new FitAddon();
        shell.term.loadAddon(shell.fit);
        shell.term.open(terminalBox);
        shell.term.onData((d) => { if (shell.session) shell.session.send(d); });
        shell.term.onResize(({ cols, rows }) => { if (shell.session) shell.session.resize(cols, rows); });
        stops.push(() => shell.term.dispose());
      } else {
        shell.term.reset();
      }
      shell.fit.fit();
      const container = shellContainer.value || defaultContainer();
      const notRunning = whyNotRunning(container);
      if (notRunning) {
        // Exec needs a running container; try again when the watch says
        // it runs.
        shell.waitingFor = container;
        shellStatus.textContent = `${notRunning} The shell connects when it runs.`;
        shellStatus.classList.remove('bad-text');
        return;
      }
      shell.waitingFor = '';
      const command = shellCommand.value.trim().split(/\s+/).filter(Boolean);
      connect(container, command.length ? command : ['/bin/sh'], true);
    } catch (e) {
      shellStatus.textContent = `The terminal could not start: ${e.message}`;
      shellStatus.classList.add('bad-text');
    } finally {
      shell.starting = false;
    }
  }

  function containerStatus(container) {
    const st = pod.status || {};
    return [...(st.containerStatuses || []), ...(st.initContainerStatuses || []), ...(st.ephemeralContainerStatuses || [])]
      .find((c) => c.name === container);
  }

  // whyNotRunning says why a shell cannot start in the container now, or ''.
  function whyNotRunning(container) {
    const phase = pod.status && pod.status.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return `The pod has ${phase === 'Succeeded' ? 'completed' : 'failed'}: no container runs to open a shell in.`;
    const cs = containerStatus(container);
    if (cs && cs.state && cs.state.running) return '';
    if (!pod.spec.nodeName) return `Container ${container} cannot run yet: the pod is not scheduled.`;
    const st = cs && cs.state;
    const why = st && st.waiting ? `waiting${st.waiting.reason ? `: ${st.waiting.reason}` : ''}` : st && st.terminated ? `terminated: ${st.terminated.reason || `exit code ${st.terminated.exitCode}`}` : 'not started';
    return `Container ${container} is not running (${why}).`;
  }

  // diagnoseExec asks for the exec again as a plain request, which the
  // server refuses with a Status (forbidden, no node address, kubelet
  // down, no such container...); a request that got as far as the kubelet
  // is refused there for want of an upgrade, and runs nothing.
  async function diagnoseExec(container, command) {
    try {
      await request('POST', resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'exec' }), {
        query: { container, command, stdin: true, stdout: true, stderr: true, tty: true },
      });
      return '';
    } catch (e) {
      return e.message;
    }
  }

  // connect opens the exec stream. An image without /bin/sh answers at once
  // with a Failure; the first attempt then tries plain sh from PATH.
  function connect(container, command, firstTry) {
    const opened = Date.now();
    shellStatus.textContent = `Connecting to ${container}: ${command.join(' ')}…`;
    shellStatus.classList.remove('bad-text');
    const session = openExec(namespace, name, { container, command, tty: true });
    shell.session = session;
    let gotData = false;
    session.onData((bytes) => {
      gotData = true;
      if (shell.session === session) shell.term.write(bytes);
    });
    if (session.ready) {
      session.ready.then(() => {
        if (shell.session !== session) return;
        shellStatus.textContent = `Connected to ${container}: ${command.join(' ')}`;
        session.resize(shell.term.cols, shell.term.rows);
        shell.term.focus();
      });
    } else {
      session.resize(shell.term.cols, shell.term.rows);
    }
    session.onClose((st) => {
      if (shell.session !== session) return;
      shell.session = null;
      const quick = Date.now() - opened < 3000 && !gotData;
      if (firstTry && quick && st && st.status === 'Failure' && command.length === 1 && command[0] === '/bin/sh'
        && /not found|no such file/i.test(st.message || '')) {
        connect(container, ['sh'], false);
        return;
      }
      const show = (msg) => {
        shellStatus.textContent = msg;
        shellStatus.classList.toggle('bad-text', !!st && st.status !== 'Success');
        shell.term.write(`\r\n\x1b[2m[${msg}]\x1b[0m\r\n`);
      };
      connectBtn.textContent = 'Reconnect';
      if (!gotData && st && st.status === 'Failure' && /refused/.test(st.message || '')) {
        // Browsers hide the answer to a refused WebSocket; the same request
        // without the upgrade gets the API's Status, which says why.
        diagnoseExec(container, command).then((why) => show(`The shell could not start: ${why || st.message}`));
        return;
      }
      show(execEndMessage(st));
    });
    connectBtn.textContent = 'Reconnect';
  }
  stops.push(endShell);

  // ---- actions and tabs the user may use
  async function buildActions() {
    const podRes = { resource: 'pods', namespace };
    const [canLogs, canExec, canDelete, canPatch] = await Promise.all([
      canI('get', { ...podRes, subresource: 'log' }),
      canI('create', { ...podRes, subresource: 'exec' }),
      canI('delete', podRes),
      canI('patch', podRes),
    ]);
    canExplain = canPatch;
    if (canLogs) {
      addTab('logs', 'Logs', 'logs');
      panels.logs.append(logControls, logStatus, pre);
      onShow.logs = () => {
        if (!logs.started && pod) {
          logs.started = true;
          fillContainerSelect(logContainer);
          restartLogs();
        }
      };
    }
    if (canExec) {
      addTab('shell', 'Shell', 'shell');
      panels.shell.append(shellControls, shellStatus, terminalBox);
      onShow.shell = () => {
        fillContainerSelect(shellContainer);
        if (!shell.session && (!shell.term || shell.waitingFor)) startShell(false);
        else if (shell.fit) requestAnimationFrame(() => shell.fit.fit());
      };
    }
    if (canDelete) {
      actions.appendChild(h('button', {
        type: 'button', class: 'btn danger', 'data-action': 'delete',
        onclick: () => deleteWithPolicy({ kindName: 'pod', what: 'pod', name, namespace, path: resourcePath({ version: 'v1', resource: 'pods', namespace, name }) }),
      }, 'Delete'));
    }
    if (pod) renderScheduling();
  }

  const want = ['logs', 'shell'].includes(rawTab) ? rawTab : 'overview';
  selectTab('overview', false);
  let tabsReady = false;
  const ready = buildActions().catch(showError).then(() => {
    tabsReady = true;
    if (want !== 'overview' && pod) selectTab(want, false);
  });

  const self = watchList(resourcePath({ version: 'v1', resource: 'pods', namespace }), {
    query: { fieldSelector: `metadata.name=${name}` },
    onUpdate: (items) => {
      const first = !pod;
      pod = items.find((p) => p.metadata.name === name) || null;
      if (!pod) {
        missing.textContent = `Pod "${name}" not found in namespace ${namespace}.`;
        missing.hidden = false;
        statusBadge.textContent = '';
        markUpdated(root);
        return;
      }
      missing.hidden = true;
      renderSummary();
      clear(containers).appendChild(containersTable(pod));
      clear(conditions).appendChild(conditionsTable(pod.status && pod.status.conditions));
      renderScheduling();
      maybeFetchStore();
      fillContainerSelect(logContainer);
      fillContainerSelect(shellContainer);
      // A log that failed because the container had not started yet is
      // tried again once it has.
      if (logs.started && logs.ended && follow.checked && !previous.checked) {
        // Following across restarts, which kubectl logs -f does not do.
        const cs = containerStatus(logContainer.value);
        if (cs && cs.state && cs.state.running && cs.containerID && cs.containerID !== logs.containerID) restartLogs(true);
      } else if (logs.started && logs.failed) {
        const cs = [...((pod.status && pod.status.containerStatuses) || []), ...((pod.status && pod.status.initContainerStatuses) || [])]
          .find((c) => c.name === logContainer.value);
        if (cs && cs.state && (cs.state.running || cs.state.terminated)) restartLogs();
      }
      if (shell.waitingFor && currentTab === 'shell' && !whyNotRunning(shell.waitingFor)) startShell(true);
      if (first && tabsReady && want !== 'overview') selectTab(want, false);
      else if (first && onShow[currentTab]) onShow[currentTab]();
      markUpdated(root);
    },
    onError: (e) => {
      missing.textContent = e.message;
      missing.hidden = false;
    },
  });
  stops.push(() => self.stop(), stopLogs);
  void ready;

  return () => {
    for (const s of stops) {
      try { s(); } catch (e) { console.error(e); }
    }
  };
}
