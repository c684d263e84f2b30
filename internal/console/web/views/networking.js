// The networking view: Services with kubectl's columns and their
// EndpointSlices' ready and not-ready addresses in a pane beside them, and
// Ingresses when the server serves networking.k8s.io ingresses.

import { watchList, discovery } from '../lib/api.js';
import { h, clear, age, markUpdated } from '../lib/dom.js';
import { table } from '../lib/table.js';

export function mount(outlet, ctx) {
  const root = h('div', { 'data-view': 'networking', class: 'view' });
  outlet.appendChild(root);
  const ns = ctx.namespace;
  const nsPath = ns ? `/namespaces/${encodeURIComponent(ns)}` : '';
  let stopped = false;
  const watches = {};
  let services = [];
  let slicesByService = new Map(); // "ns/name" → [EndpointSlice]
  let selected = '';
  let search = ctx.search || '';

  const svcKey = (s) => `${s.metadata.namespace}/${s.metadata.name}`;
  const svcError = h('p', { class: 'bad-text', hidden: true });
  const svcTable = table({
    label: 'Services',
    key: svcKey,
    onOpen: (s) => { selected = svcKey(s); renderDetail(); },
    empty: ns ? `No services in ${ns}.` : 'No services.',
    columns: [
      ...(ns ? [] : [{ title: 'Namespace', value: (s) => s.metadata.namespace, width: 'minmax(6em, 0.7fr)' }]),
      { title: 'Name', value: (s) => s.metadata.name, width: 'minmax(7em, 1.2fr)' },
      { title: 'Type', value: (s) => s.spec.type || 'ClusterIP', width: '7em' },
      { title: 'Cluster IP', value: (s) => s.spec.clusterIP || '<none>', width: 'minmax(9.5em, 0.6fr)' },
      { title: 'External IP', value: externalIP, width: 'minmax(6em, 0.8fr)' },
      { title: 'Ports', value: ports, width: 'minmax(6em, 0.9fr)' },
      { title: 'Endpoints', value: endpointsCell, sort: (s) => endpointCounts(s).ready, width: 'minmax(6.5em, 0.8fr)' },
      { title: 'Selector', value: (s) => selector(s.spec.selector), width: 'minmax(5em, 0.9fr)' },
      { title: 'Age', value: (s) => age(s.metadata.creationTimestamp), sort: (s) => -Date.parse(s.metadata.creationTimestamp), width: '5.5em' },
    ],
  });
  svcTable.el.style.setProperty('--vt-max-height', '52vh');
  const detail = h('div', { class: 'panel', 'data-service-detail': '' },
    h('p', { class: 'muted' }, 'Choose a service to see its endpoints.'));

  const ingPanel = h('section', { class: 'panel', 'aria-labelledby': 'net-ing', hidden: true });

  root.append(
    h('h1', null, 'Networking'),
    h('div', { class: 'split' },
      h('section', { class: 'panel', 'aria-labelledby': 'net-svc' },
        h('h2', { id: 'net-svc' }, 'Services'), svcError, svcTable.el),
      detail),
    ingPanel);

  function endpointCounts(s) {
    let ready = 0;
    let notReady = 0;
    for (const sl of slicesByService.get(svcKey(s)) || []) {
      for (const ep of sl.endpoints || []) {
        const n = (ep.addresses || []).length;
        if (isReady(ep)) ready += n; else notReady += n;
      }
    }
    return { ready, notReady };
  }
  function endpointsCell(s) {
    if (!s.spec.selector && !(slicesByService.get(svcKey(s)) || []).length) return h('span', { class: 'muted' }, '<none>');
    const { ready, notReady } = endpointCounts(s);
    const cls = notReady ? 'status-warn' : ready ? 'status-ok' : 'status-idle';
    return h('span', { class: cls, title: `${ready} ready, ${notReady} not ready` },
      notReady ? `${ready}/${ready + notReady} ready` : `${ready} ready`);
  }

  function renderDetail() {
    const s = services.find((x) => svcKey(x) === selected);
    clear(detail);
    if (!s) {
      detail.append(h('p', { class: 'muted' }, selected ? `${selected} is gone.` : 'Choose a service to see its endpoints.'));
      return;
    }
    const slices = slicesByService.get(selected) || [];
    const ready = [];
    const notReady = [];
    for (const sl of slices) {
      const slPorts = (sl.ports || []).map((p) => `${p.port}/${p.protocol || 'TCP'}${p.name ? ` (${p.name})` : ''}`).join(', ');
      for (const ep of sl.endpoints || []) {
        for (const a of ep.addresses || []) {
          const target = ep.targetRef ? `${(ep.targetRef.kind || '').toLowerCase()}/${ep.targetRef.name}` : '';
          const item = h('li', { 'data-address': a },
            a, slPorts ? h('span', { class: 'muted' }, ` :${slPorts}`) : null,
            target ? [' ', ep.targetRef.kind === 'Pod'
              ? h('a', { href: `#/pods/${encodeURIComponent(ep.targetRef.namespace || s.metadata.namespace)}/${encodeURIComponent(ep.targetRef.name)}` }, target)
              : h('span', null, target)] : null,
            ep.nodeName ? h('span', { class: 'muted' }, ` on ${ep.nodeName}`) : null,
            !isReady(ep) && ep.conditions && ep.conditions.terminating ? h('span', { class: 'badge warn' }, 'terminating') : null);
          (isReady(ep) ? ready : notReady).push(item);
        }
      }
    }
    const sp = s.spec;
    detail.append(
      h('div', { class: 'toolbar' },
        h('h2', { style: { margin: 0 } }, s.metadata.name, h('span', { class: 'muted' }, ` ${s.metadata.namespace}`)),
        h('span', { class: 'spacer' }),
        h('a', { href: `#/resources/core/v1/services/${encodeURIComponent(s.metadata.namespace)}/${encodeURIComponent(s.metadata.name)}` }, 'YAML')),
      h('dl', { class: 'kv' },
        h('dt', null, 'Type'), h('dd', null, sp.type || 'ClusterIP'),
        h('dt', null, 'Cluster IPs'), h('dd', null, (sp.clusterIPs || [sp.clusterIP]).filter(Boolean).join(', ') || '<none>'),
        h('dt', null, 'External'), h('dd', null, externalIP(s)),
        h('dt', null, 'Ports'), h('dd', null, (sp.ports || []).map((p) =>
          `${p.name ? `${p.name} ` : ''}${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol || 'TCP'} \u2192 ${p.targetPort ?? p.port}`).join(', ') || '<none>'),
        h('dt', null, 'Selector'), h('dd', null, selector(sp.selector)),
        h('dt', null, 'Session affinity'), h('dd', null, sp.sessionAffinity || 'None'),
        sp.externalTrafficPolicy ? [h('dt', null, 'Traffic policy'), h('dd', null, `external ${sp.externalTrafficPolicy}, internal ${sp.internalTrafficPolicy || 'Cluster'}`)] : null),
      h('h3', { style: { marginTop: '12px' } }, `Ready addresses (${ready.length})`),
      ready.length ? h('ul', { class: 'addr-list', 'data-ready': '' }, ready) : h('p', { class: 'empty', 'data-ready': '' }, 'None.'),
      h('h3', null, `Not ready addresses (${notReady.length})`),
      notReady.length ? h('ul', { class: 'addr-list', 'data-not-ready': '' }, notReady) : h('p', { class: 'empty', 'data-not-ready': '' }, 'None.'),
      h('p', { class: 'muted', style: { marginTop: '8px' } }, `${slices.length} EndpointSlice${slices.length === 1 ? '' : 's'}`));
  }

  function startServices() {
    if (watches.svc) watches.svc.stop();
    const isSelector = /[=!]|\sin\s|\snotin\s/.test(search);
    const byName = search && !isSelector ? (o) => o.metadata.name.includes(search) : null;
    svcTable.setFilter(byName);
    if (ingTable) ingTable.setFilter(byName);
    watches.svc = watchList(`/api/v1${nsPath}/services`, {
      query: { labelSelector: isSelector ? search : undefined },
      onUpdate: (items) => {
        svcError.hidden = true;
        services = items;
        svcTable.setItems(items);
        if (selected) renderDetail();
        markUpdated(root);
      },
      onError: (e) => { svcError.hidden = false; svcError.textContent = e.message; if (!services.length) svcTable.setItems([]); },
    });
  }

  const sliceWatch = watchList(`/apis/discovery.k8s.io/v1${nsPath}/endpointslices`, {
    onUpdate: (items) => {
      const m = new Map();
      for (const sl of items) {
        const name = (sl.metadata.labels || {})['kubernetes.io/service-name'];
        if (!name) continue;
        const k = `${sl.metadata.namespace}/${name}`;
        if (!m.has(k)) m.set(k, []);
        m.get(k).push(sl);
      }
      slicesByService = m;
      svcTable.refresh();
      if (selected) renderDetail();
      markUpdated(root);
    },
  });

  let ingTable = null;
  discovery().then((res) => {
    if (stopped) return;
    const ing = res.find((r) => r.group === 'networking.k8s.io' && r.resource === 'ingresses');
    if (!ing) return;
    const ingError = h('p', { class: 'bad-text', hidden: true });
    ingTable = table({
      label: 'Ingresses',
      key: (i) => `${i.metadata.namespace}/${i.metadata.name}`,
      onOpen: (i) => ctx.navigate(`#/resources/networking.k8s.io/${ing.version}/ingresses/${encodeURIComponent(i.metadata.namespace)}/${encodeURIComponent(i.metadata.name)}`),
      empty: ns ? `No ingresses in ${ns}.` : 'No ingresses.',
      columns: [
        ...(ns ? [] : [{ title: 'Namespace', value: (i) => i.metadata.namespace, width: 'minmax(7em, 0.8fr)' }]),
        { title: 'Name', value: (i) => i.metadata.name, width: 'minmax(10em, 1.2fr)' },
        { title: 'Class', value: (i) => i.spec.ingressClassName || '<none>', width: 'minmax(6em, 0.7fr)' },
        { title: 'Hosts', value: (i) => ingressHosts(i), width: 'minmax(10em, 1.5fr)' },
        { title: 'Address', value: (i) => lbAddresses(i.status) || '', width: 'minmax(8em, 1fr)' },
        { title: 'Ports', value: (i) => ((i.spec.tls || []).length ? '80, 443' : '80'), width: '6em' },
        { title: 'Age', value: (i) => age(i.metadata.creationTimestamp), sort: (i) => -Date.parse(i.metadata.creationTimestamp), width: '5.5em' },
      ],
    });
    ingTable.el.style.setProperty('--vt-max-height', '30vh');
    if (search && !/[=!]/.test(search)) ingTable.setFilter((o) => o.metadata.name.includes(search));
    ingPanel.append(h('h2', { id: 'net-ing' }, 'Ingresses'), ingError, ingTable.el);
    ingPanel.hidden = false;
    watches.ing = watchList(`/apis/networking.k8s.io/${ing.version}${nsPath}/ingresses`, {
      onUpdate: (items) => { ingError.hidden = true; ingTable.setItems(items); markUpdated(root); },
      onError: (e) => { ingError.hidden = false; ingError.textContent = e.message; if (!ingTable.items.length) ingTable.setItems([]); },
    });
  }).catch(() => { /* no discovery: no ingress table */ });

  startServices();
  const offSearch = ctx.onSearch((text) => { search = text; startServices(); });
  const ageTimer = setInterval(() => { svcTable.refresh(); if (ingTable) ingTable.refresh(); }, 30000);

  return () => {
    stopped = true;
    clearInterval(ageTimer);
    offSearch();
    sliceWatch.stop();
    if (watches.svc) watches.svc.stop();
    if (watches.ing) watches.ing.stop();
  };
}

// An endpoint without a ready condition counts as ready, as the API says.
function isReady(ep) {
  return !ep.conditions || ep.conditions.ready !== false;
}

// externalIP is kubectl's EXTERNAL-IP column.
function externalIP(s) {
  const sp = s.spec;
  switch (sp.type) {
    case 'ExternalName': return sp.externalName || '<none>';
    case 'LoadBalancer': {
      const lb = lbAddresses(s.status);
      const ips = [...(lb ? lb.split(',') : []), ...(sp.externalIPs || [])];
      return ips.length ? ips.join(',') : '<pending>';
    }
    default: return (sp.externalIPs || []).join(',') || '<none>';
  }
}

function lbAddresses(status) {
  const ing = (status && status.loadBalancer && status.loadBalancer.ingress) || [];
  return ing.map((i) => i.ip || i.hostname).filter(Boolean).join(',');
}

// ports is kubectl's PORT(S) column: port[:nodePort]/protocol.
function ports(s) {
  const p = s.spec.ports || [];
  if (!p.length) return '<none>';
  return p.map((x) => `${x.port}${x.nodePort ? `:${x.nodePort}` : ''}/${x.protocol || 'TCP'}`).join(',');
}

function selector(sel) {
  const e = Object.entries(sel || {});
  return e.length ? e.map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
}

function ingressHosts(i) {
  const hosts = (i.spec.rules || []).map((r) => r.host || '*');
  if (!hosts.length) return '*';
  return hosts.length > 4 ? `${hosts.slice(0, 4).join(',')} + ${hosts.length - 4} more...` : hosts.join(',');
}
