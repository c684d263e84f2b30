// Tests of lib/api.js's watchList against a scripted fetch: list pages,
// the watch's events, a bookmark, the stream's end, a 410 and the relist.
// Run with `node --test internal/console/web/lib/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const store = new Map();
globalThis.sessionStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};
globalThis.location = { origin: 'https://orca.test', protocol: 'https:', host: 'orca.test' };
globalThis.requestAnimationFrame = (fn) => setTimeout(fn, 0);
globalThis.cancelAnimationFrame = (id) => clearTimeout(id);

const pod = (name, rv) => ({ metadata: { namespace: 'ns', name, resourceVersion: rv } });
const json = (obj, status = 200) => new Response(JSON.stringify(obj), { status, headers: { 'Content-Type': 'application/json' } });

// stream answers a watch with these events, then ends (or hangs until
// aborted when hang is set).
function stream(events, signal, hang) {
  const enc = new TextEncoder();
  return new Response(new ReadableStream({
    start(c) {
      for (const e of events) c.enqueue(enc.encode(`${JSON.stringify(e)}\n`));
      if (!hang) c.close();
      else signal.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
    },
  }), { status: 200, headers: { 'Content-Type': 'application/json' } });
}

test('watchList pages, follows, resumes after a bookmark and relists on 410', async () => {
  const seen = [];
  let shown;
  const firstShown = new Promise((r) => { shown = r; });
  const script = [
    (q) => { assert.equal(q.get('limit'), '500'); assert.equal(q.get('continue'), null);
      return json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10', continue: 'c1' }, items: [pod('b', '3'), pod('a', '2')] }); },
    async (q) => { assert.equal(q.get('continue'), 'c1');
      await firstShown; // the second page waits until the first is on screen
      return json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod('c', '4')] }); },
    (q, s) => { assert.equal(q.get('watch'), '1'); assert.equal(q.get('resourceVersion'), '10'); assert.equal(q.get('allowWatchBookmarks'), 'true');
      return stream([
        { type: 'ADDED', object: { kind: 'Pod', apiVersion: 'v1', ...pod('d', '11') } },
        { type: 'MODIFIED', object: { kind: 'Pod', apiVersion: 'v1', ...pod('a', '12') } },
        { type: 'DELETED', object: { kind: 'Pod', apiVersion: 'v1', ...pod('b', '13') } },
        { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '15' } } },
      ], s); },
    (q, s) => { assert.equal(q.get('resourceVersion'), '15', 'resumes from the bookmark');
      return stream([{ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }], s); },
    (q) => { assert.equal(q.get('watch'), null, 'lists again after 410');
      return json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '20' }, items: [pod('a', '18'), pod('e', '19')] }); },
    (q, s) => { assert.equal(q.get('resourceVersion'), '20'); return stream([], s, true); },
  ];
  globalThis.fetch = async (url, opts) => {
    const u = new URL(url, 'https://orca.test');
    seen.push(u.search);
    assert.equal(opts.headers.Authorization, 'Bearer t0ken');
    const step = script.shift();
    if (!step) return new Promise(() => {});
    return step(u.searchParams, opts.signal);
  };
  const api = await import('./api.js');
  api.setToken('t0ken');
  const updates = [];
  let done;
  const finished = new Promise((r) => { done = r; });
  const w = api.watchList('/api/v1/namespaces/ns/pods', {
    onUpdate: (items, ev, events) => {
      updates.push({ keys: items.map((o) => o.metadata.name).join(','), type: ev.type, partial: !!ev.partial, n: events.length });
      shown();
      if (script.length === 0 && ev.type === 'LIST' && !ev.partial) done();
    },
  });
  await finished;
  w.stop();
  assert.deepEqual(updates[0], { keys: 'a,b', type: 'LIST', partial: true, n: 1 }, 'the first page is shown at once');
  // The rest of the list and the three changes come within one frame, so
  // they reach the view as one call carrying all four events.
  assert.deepEqual(updates[1], { keys: 'a,c,d', type: 'DELETED', partial: false, n: 4 }, 'added d, deleted b');
  assert.deepEqual(updates[updates.length - 1], { keys: 'a,e', type: 'LIST', partial: false, n: 1 });
  assert.equal(seen.length, 6);
});

test('errors carry the Status message and a 401 signs out', async () => {
  const api = await import('./api.js');
  api.setToken('bad');
  let signedOut = '';
  api.onUnauthorized((m) => { signedOut = m; });
  globalThis.fetch = async () => json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }, 401);
  await assert.rejects(api.get('/api'), (e) => e instanceof api.ApiError && e.status === 401 && e.message === 'Unauthorized');
  assert.equal(signedOut, 'Unauthorized');
  assert.equal(api.getToken(), '');
  globalThis.fetch = async () => json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'pods "x" is forbidden: no', reason: 'Forbidden', code: 403 }, 403);
  await assert.rejects(api.del('/api/v1/namespaces/ns/pods/x'), (e) => e.status === 403 && e.reason === 'Forbidden' && e.message === 'pods "x" is forbidden: no');
});

test('a request the network cut is sent again when repeating it is harmless', async () => {
  const api = await import('./api.js');
  api.setToken('t');
  // The first attempt of every request fails as a browser's
  // ERR_NETWORK_CHANGED does; the next one is answered.
  let calls = [];
  const cutOnce = () => {
    calls = [];
    globalThis.fetch = async (url, opts) => {
      calls.push(opts.method);
      if (calls.length === 1) throw new TypeError('Failed to fetch');
      return json({ kind: 'Scale', spec: { replicas: 2 } });
    };
  };
  cutOnce();
  const scale = await api.patch('/apis/apps/v1/namespaces/ns/deployments/web/scale', { spec: { replicas: 2 } }, 'merge', { repeatable: true });
  assert.equal(scale.spec.replicas, 2);
  assert.deepEqual(calls, ['PATCH', 'PATCH']);
  cutOnce();
  await api.apply('/api/v1/namespaces/ns/configmaps/c', 'kind: ConfigMap\n');
  assert.deepEqual(calls, ['PATCH', 'PATCH']);
  // A patch not known to be repeatable, and a create, are not sent twice:
  // the first may have been carried out.
  cutOnce();
  await assert.rejects(api.patch('/api/v1/namespaces/ns/configmaps/c', { data: { n: '1' } }, 'merge'), (e) => e.reason === 'NetworkError');
  assert.deepEqual(calls, ['PATCH']);
  cutOnce();
  await assert.rejects(api.create('/api/v1/namespaces/ns/configmaps', { kind: 'ConfigMap' }), (e) => e.reason === 'NetworkError');
  assert.deepEqual(calls, ['POST']);
});
