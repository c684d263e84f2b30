// The console's Kubernetes API client: the bearer token, requests with
// errors as Status, list-then-watch with paging and resumption, discovery,
// access reviews, pod logs and exec over WebSocket. Everything goes to the
// page's own origin, so the server's RBAC decides what the user may do.

const TOKEN_KEY = 'orca.token';

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  sessionStorage.setItem(TOKEN_KEY, t);
  accessCache.clear();
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  accessCache.clear();
}

// A 401 means the token is gone or wrong: the app signs out and shows the
// login form. The app registers what that means; the client only reports it.
let unauthorizedHandler = null;
export function onUnauthorized(fn) {
  unauthorizedHandler = fn;
}
function unauthorized(message) {
  clearToken();
  if (unauthorizedHandler) unauthorizedHandler(message || 'Unauthorized');
}

export class ApiError extends Error {
  constructor(message, status, reason, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason || '';
    this.details = details || null;
  }
}

// errorFrom turns a failed response into an ApiError carrying the Status
// message, which is what kubectl would print after "Error from server".
async function errorFrom(res) {
  const text = await res.text().catch(() => '');
  let st = null;
  try { st = JSON.parse(text); } catch { /* not a Status: plain text below */ }
  if (st && st.kind === 'Status') {
    return new ApiError(st.message || res.statusText, st.code || res.status, st.reason, st.details);
  }
  return new ApiError(text.trim() || `${res.status} ${res.statusText}`, res.status, res.statusText);
}

function url(path, query) {
  const u = new URL(path, location.origin);
  if (query) {
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null || v === '' || v === false) continue;
      if (Array.isArray(v)) v.forEach((x) => u.searchParams.append(k, String(x)));
      else u.searchParams.set(k, String(v));
    }
  }
  return u.pathname + u.search;
}

function headers(extra) {
  const hd = { ...extra };
  const t = getToken();
  if (t) hd.Authorization = `Bearer ${t}`;
  return hd;
}

const jsonType = /^application\/(.+\+)?json/;

// readRetries are the pauses (ms) before a failed read is tried again.
const readRetries = [100, 400, 1500];

// raw sends a request and returns the Response, throwing an ApiError for
// anything but 2xx.
async function raw(method, path, { query, body, contentType, accept, signal, repeatable = false } = {}) {
  const hd = headers({ Accept: accept || 'application/json' });
  let payload;
  if (body !== undefined && body !== null) {
    if (typeof body === 'string' || body instanceof Blob || body instanceof ArrayBuffer) {
      payload = body;
      hd['Content-Type'] = contentType || 'application/json';
    } else {
      payload = JSON.stringify(body);
      hd['Content-Type'] = contentType || 'application/json';
    }
  }
  let res;
  // A browser drops every open request when the machine's network
  // interfaces change (ERR_NETWORK_CHANGED), which on a node happens each
  // time a pod starts or stops; reads are tried again, and so are writes
  // whose second run changes nothing the first did not (repeatable: set
  // a field to a value, apply a configuration); others are not, since
  // they may have been carried out.
  const tries = method === 'GET' || method === 'HEAD' || repeatable ? readRetries.length + 1 : 1;
  for (let i = 0; ; i++) {
    try {
      res = await fetch(url(path, query), { method, headers: hd, body: payload, signal, cache: 'no-store' });
      break;
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      if (i + 1 >= tries) throw new ApiError(`cannot reach the API server: ${e.message}`, 0, 'NetworkError');
      await new Promise((resolve) => setTimeout(resolve, readRetries[i]));
      if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    }
  }
  if (!res.ok) {
    const err = await errorFrom(res);
    if (res.status === 401) unauthorized(err.message);
    throw err;
  }
  return res;
}

export async function request(method, path, opts = {}) {
  const res = await raw(method, path, opts);
  const accept = opts.accept || 'application/json';
  const ct = res.headers.get('Content-Type') || '';
  if (res.status === 204) return null;
  if (jsonType.test(accept) && jsonType.test(ct)) return res.json();
  return res.text();
}

export function get(path, query) {
  return request('GET', path, { query });
}

export function create(path, obj) {
  return request('POST', path, { body: obj });
}

export function del(path, options) {
  return request('DELETE', path, { body: options ? { kind: 'DeleteOptions', apiVersion: 'v1', ...options } : undefined });
}

const patchTypes = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

// patch sends a patch; repeatable says that sending it twice leaves what
// sending it once does, so a request the network cut is sent again.
export function patch(path, body, type = 'merge', { repeatable = false } = {}) {
  return request('PATCH', path, { body, contentType: patchTypes[type] || type, repeatable });
}

// apply is server-side apply as orca-console; applying a configuration
// twice is applying it once, so a cut request is sent again.
export function apply(path, yamlText, { force = false, dryRun = false } = {}) {
  return request('PATCH', path, {
    query: { fieldManager: 'orca-console', force: force || undefined, dryRun: dryRun ? 'All' : undefined },
    body: yamlText,
    contentType: 'application/apply-patch+yaml',
    repeatable: true,
  });
}

export function getYAML(path) {
  return request('GET', path, { accept: 'application/yaml' });
}

export function resourcePath({ group, version, resource, namespace, name, subresource }) {
  const g = group && group !== 'core' ? group : '';
  let p = g ? `/apis/${g}/${version}` : `/api/${version || 'v1'}`;
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${resource}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

export function objectKey(obj) {
  const m = obj.metadata || {};
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}

function compareKeys(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// nextFrame runs fn on the next animation frame, or after a short timer when
// frames are throttled (a hidden tab), whichever comes first.
function nextFrame(fn) {
  let done = false;
  const run = () => { if (!done) { done = true; fn(); } };
  const raf = requestAnimationFrame(run);
  const timer = setTimeout(run, 250);
  return () => { done = true; cancelAnimationFrame(raf); clearTimeout(timer); };
}

const LIST_LIMIT = 500;
// LIST_LIMIT_MORE is the size of the pages after the first: a page costs
// the server about as much at 500 objects as at several thousand, so
// small pages only slow a long list down once its first rows are shown.
const LIST_LIMIT_MORE = 5000;

// watchList keeps a sorted copy of a collection: it lists (in pages of 500)
// and then watches from the list's resourceVersion through one streaming
// fetch. A stream the server ends is resumed from the last resourceVersion
// seen (bookmarks keep it fresh); 410 Gone means that version is compacted,
// so it lists again. onUpdate is called at most once per animation frame.
// Its third argument is every event since the previous call. A first list
// of many pages is handed out page by page ({type: 'LIST', partial: true}).
export function watchList(path, { query = {}, onUpdate, onError } = {}) {
  const objects = new Map();
  let keys = []; // sorted keys of objects, kept in order by insertion
  let rv = '';
  let stopped = false;
  let ctrl = null;
  let pending = [];
  let cancelFrame = null;
  let backoff = 500;
  let retryTimer = null;
  let kind = '';
  let apiVersion = '';

  const flush = () => {
    cancelFrame = null;
    if (stopped || !onUpdate) return;
    const events = pending;
    pending = [];
    const items = keys.map((k) => objects.get(k));
    try {
      onUpdate(items, events[events.length - 1], events);
    } catch (e) {
      console.error('watchList onUpdate', e);
    }
  };
  const changed = (ev) => {
    pending.push(ev);
    if (!cancelFrame) cancelFrame = nextFrame(flush);
  };

  const fill = (o) => {
    // Items in a list carry no kind; the views and the YAML editor want it.
    if (!o.kind && kind) o.kind = kind;
    if (!o.apiVersion && apiVersion) o.apiVersion = apiVersion;
    return o;
  };

  const put = (o) => {
    const k = objectKey(o);
    if (!objects.has(k)) {
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareKeys(keys[mid], k) < 0) lo = mid + 1; else hi = mid;
      }
      keys.splice(lo, 0, k);
    }
    objects.set(k, o);
  };
  const remove = (o) => {
    const k = objectKey(o);
    if (!objects.delete(k)) return;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareKeys(keys[mid], k) < 0) lo = mid + 1; else hi = mid;
    }
    if (keys[lo] === k) keys.splice(lo, 1);
  };

  const fail = (e) => {
    if (stopped || e.name === 'AbortError') return;
    if (e instanceof ApiError && e.status === 401) { stop(); return; }
    if (onError) {
      try { onError(e); } catch (x) { console.error(x); }
    }
    retryTimer = setTimeout(() => { retryTimer = null; run(); }, backoff);
    backoff = Math.min(backoff * 2, 30000);
  };

  // list reads every page. The first list shows each page as it comes, so
  // a long collection paints at once; a relist builds the new set aside and
  // swaps it in whole, so objects do not vanish and come back meanwhile.
  const list = async () => {
    const progressive = objects.size === 0;
    const fresh = progressive ? null : new Map();
    let cont = '';
    let listRV = '';
    do {
      ctrl = new AbortController();
      const res = await raw('GET', path, { query: { ...query, limit: cont ? LIST_LIMIT_MORE : LIST_LIMIT, continue: cont || undefined }, signal: ctrl.signal });
      const body = await res.json();
      if (!kind && body.kind) kind = body.kind.replace(/List$/, '');
      if (!apiVersion && body.apiVersion) apiVersion = body.apiVersion;
      for (const o of body.items || []) {
        if (progressive) put(fill(o)); else fresh.set(objectKey(o), fill(o));
      }
      cont = (body.metadata && body.metadata.continue) || '';
      if (!listRV) listRV = (body.metadata && body.metadata.resourceVersion) || '';
      if (stopped) return;
      if (progressive && cont) changed({ type: 'LIST', partial: true });
    } while (cont);
    if (!progressive) {
      objects.clear();
      for (const [k, o] of fresh) objects.set(k, o);
      keys = Array.from(fresh.keys()).sort(compareKeys);
    }
    rv = listRV;
    changed({ type: 'LIST' });
  };

  // watch reads one watch stream to its end. It returns 'gone' when the
  // server says the resourceVersion is too old.
  const watch = async () => {
    ctrl = new AbortController();
    const res = await raw('GET', path, {
      query: { ...query, watch: 1, resourceVersion: rv, allowWatchBookmarks: true },
      signal: ctrl.signal,
    });
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        // The stream broke off (the browser drops streams when the
        // machine's network changes): resume from the last
        // resourceVersion, as when the server ends it, without an error
        // for the view to show.
        return 'ended';
      }
      const { value, done } = chunk;
      if (done) break;
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
        const newRV = o.metadata && o.metadata.resourceVersion;
        if (newRV) rv = newRV;
        backoff = 500;
        if (ev.type === 'BOOKMARK') continue;
        fill(o);
        if (ev.type === 'DELETED') remove(o); else put(o);
        changed({ type: ev.type, object: o });
      }
    }
    return 'ended';
  };

  const run = async () => {
    try {
      while (!stopped) {
        if (!rv) await list();
        if (stopped) return;
        const began = Date.now();
        const how = await watch();
        if (how === 'gone') {
          rv = '';
        } else if (Date.now() - began < 1000) {
          // A server that ends streams at once should not be hammered.
          await new Promise((r) => { retryTimer = setTimeout(r, backoff); });
          backoff = Math.min(backoff * 2, 30000);
        }
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) rv = '';
      fail(e);
    }
  };

  function stop() {
    stopped = true;
    if (ctrl) ctrl.abort();
    if (cancelFrame) cancelFrame();
    if (retryTimer) clearTimeout(retryTimer);
  }

  run();
  return { stop };
}

// Discovery: aggregated (apidiscovery.k8s.io/v2) when the server serves it,
// else /api/v1 and each group's preferred version one by one.
const aggregatedAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
let discoveryPromise = null;

export function discovery() {
  if (!discoveryPromise) {
    discoveryPromise = loadDiscovery().catch((e) => { discoveryPromise = null; throw e; });
  }
  return discoveryPromise;
}

async function loadDiscovery() {
  const [core, groups] = await Promise.all([
    request('GET', '/api', { accept: aggregatedAccept }),
    request('GET', '/apis', { accept: aggregatedAccept }),
  ]);
  if (core.kind === 'APIGroupDiscoveryList' && groups.kind === 'APIGroupDiscoveryList') {
    return [...fromAggregated(core, ''), ...fromAggregated(groups, null)];
  }
  const out = [];
  const gvs = [{ group: '', version: 'v1', path: '/api/v1' }];
  for (const g of groups.groups || []) {
    const pv = g.preferredVersion || g.versions[0];
    gvs.push({ group: g.name, version: pv.version, path: `/apis/${pv.groupVersion}` });
  }
  const lists = await Promise.all(gvs.map((gv) => get(gv.path).catch(() => ({ resources: [] }))));
  lists.forEach((l, i) => {
    const { group, version } = gvs[i];
    for (const r of l.resources || []) {
      if (r.name.includes('/')) continue;
      out.push({ group, version, resource: r.name, kind: r.kind, namespaced: !!r.namespaced, verbs: r.verbs || [], shortNames: r.shortNames || [] });
    }
  });
  return out;
}

function fromAggregated(list, coreGroup) {
  const out = [];
  for (const g of list.items || []) {
    const group = coreGroup ?? ((g.metadata && g.metadata.name) || '');
    const v = (g.versions || [])[0]; // versions come in order of preference
    if (!v) continue;
    for (const r of v.resources || []) {
      out.push({
        group,
        version: v.version,
        resource: r.resource,
        kind: (r.responseKind && r.responseKind.kind) || '',
        namespaced: r.scope === 'Namespaced',
        verbs: r.verbs || [],
        shortNames: r.shortNames || [],
      });
    }
  }
  return out;
}

// canI asks the server through a SelfSubjectAccessReview; answers are kept
// for a minute so a table of buttons costs one request per distinct check.
const accessCache = new Map();
const ACCESS_TTL = 60000;

export function canI(verb, { group = '', resource, namespace = '', subresource = '', name = '' } = {}) {
  const g = group === 'core' ? '' : group;
  const key = [verb, g, resource, subresource, namespace, name].join('|');
  const hit = accessCache.get(key);
  if (hit && Date.now() - hit.at < ACCESS_TTL) return hit.answer;
  const answer = create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    spec: {
      resourceAttributes: {
        verb, group: g, resource, subresource: subresource || undefined,
        namespace: namespace || undefined, name: name || undefined,
      },
    },
  }).then((r) => !!(r.status && r.status.allowed), () => false);
  accessCache.set(key, { at: Date.now(), answer });
  return answer;
}

// whoAmI asks authentication.k8s.io/v1 selfsubjectreviews for the user's
// name; null when the server does not serve it.
export async function whoAmI() {
  try {
    const r = await create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1',
    });
    return (r.status && r.status.userInfo) || null;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) throw e;
    return null;
  }
}

// streamLogs reads pods/log as it grows. The returned done promise settles
// when the stream ends; it rejects with an ApiError if the server refused
// (onError, if given, is called with it too).
export function streamLogs(namespace, pod, { container, follow = true, previous = false, tailLines, timestamps, onError } = {}, onText) {
  const ctrl = new AbortController();
  const done = (async () => {
    const res = await raw('GET', resourcePath({ version: 'v1', resource: 'pods', namespace, name: pod, subresource: 'log' }), {
      query: { container, follow, previous, tailLines, timestamps },
      accept: '*/*',
      signal: ctrl.signal,
    });
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      const text = dec.decode(value, { stream: true });
      if (text) onText(text);
    }
    const rest = dec.decode();
    if (rest) onText(rest);
  })().catch((e) => {
    if (e.name === 'AbortError') return;
    if (onError) onError(e);
    throw e;
  });
  // A caller that only uses onError should not see an unhandled rejection.
  done.catch(() => {});
  return { stop: () => ctrl.abort(), done };
}

function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const CH_STDIN = 0;
const CH_ERROR = 3;
const CH_RESIZE = 4;
const CH_CLOSE = 255;

// openExec runs a command in a container over the channel protocol: every
// binary message starts with its stream's number (0 stdin, 1 stdout,
// 2 stderr, 3 the final Status, 4 terminal size, 255 close a stream in v5).
// onClose gets that final Status (status 'Success', or 'Failure' with the
// message), or a Failure of our own when the connection dropped without one.
export function openExec(namespace, pod, { container, command = ['/bin/sh'], tty = true, stdin = true } = {}) {
  const cmd = Array.isArray(command) ? command : [command];
  const path = url(resourcePath({ version: 'v1', resource: 'pods', namespace, name: pod, subresource: 'exec' }), {
    container, command: cmd, stdin, stdout: true, stderr: true, tty,
  });
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${scheme}//${location.host}${path}`, [
    'v5.channel.k8s.io',
    'v4.channel.k8s.io',
    `base64url.bearer.authorization.k8s.io.${base64url(getToken())}`,
  ]);
  ws.binaryType = 'arraybuffer';
  const enc = new TextEncoder();
  let dataFns = [];
  let closeFns = [];
  const early = [];
  let status = null;
  let closed = false;
  let opened = false;
  const ready = new Promise((resolve) => {
    ws.addEventListener('open', () => { opened = true; resolve(); });
    ws.addEventListener('close', () => resolve());
  });

  const frame = (ch, payload) => {
    const out = new Uint8Array(payload.length + 1);
    out[0] = ch;
    out.set(payload, 1);
    return out;
  };
  const sendFrame = async (ch, payload) => {
    await ready;
    if (ws.readyState === WebSocket.OPEN) ws.send(frame(ch, payload));
  };

  ws.addEventListener('message', (e) => {
    let bytes;
    if (typeof e.data === 'string') bytes = enc.encode(e.data);
    else bytes = new Uint8Array(e.data);
    if (bytes.length === 0) return;
    const ch = bytes[0];
    const payload = bytes.subarray(1);
    if (ch === CH_ERROR) {
      try { status = JSON.parse(new TextDecoder().decode(payload)); } catch { status = { status: 'Failure', message: new TextDecoder().decode(payload) }; }
      return;
    }
    if (dataFns.length === 0) early.push([payload, ch]);
    else dataFns.forEach((fn) => fn(payload, ch));
  });
  ws.addEventListener('close', async (e) => {
    if (closed) return;
    let st = status;
    if (!st && opened) st = { status: 'Success', code: e.code };
    if (!st) {
      // A browser hides a refused handshake's answer; an access review at
      // least tells a missing grant from a container that cannot be reached.
      const may = await canI('create', { resource: 'pods', subresource: 'exec', namespace, name: pod });
      st = {
        status: 'Failure',
        code: e.code,
        reason: may ? 'ServiceUnavailable' : 'Forbidden',
        message: may
          ? `the server refused the connection to ${namespace}/${pod} (the pod may not be running, or its node cannot be reached)`
          : `pods "${pod}" is forbidden: this user cannot create resource "pods/exec" in the namespace "${namespace}"`,
      };
    }
    closed = true;
    status = st;
    closeFns.forEach((fn) => fn(st));
  });

  return {
    ready,
    get protocol() { return ws.protocol; },
    send(data) {
      sendFrame(CH_STDIN, typeof data === 'string' ? enc.encode(data) : new Uint8Array(data));
    },
    resize(cols, rows) {
      sendFrame(CH_RESIZE, enc.encode(JSON.stringify({ Width: cols, Height: rows })));
    },
    // closeStdin ends the command's input (v5 only), like ^D on a pipe.
    closeStdin() {
      if (ws.protocol === 'v5.channel.k8s.io') sendFrame(CH_CLOSE, new Uint8Array([CH_STDIN]));
    },
    close() {
      ws.close();
    },
    onData(fn) {
      dataFns.push(fn);
      while (early.length) {
        const [p, ch] = early.shift();
        dataFns.forEach((f) => f(p, ch));
      }
    },
    onClose(fn) {
      closeFns.push(fn);
      if (closed) fn(status);
    },
  };
}
