// Tests of the pure helpers in lib/dom.js and lib/api.js; run with
// `node --test internal/console/web/lib/`. Nothing here touches the DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration, parseQuantity, formatBytes, formatCPU } from './dom.js';
import { resourcePath, objectKey } from './api.js';

// The cases of k8s.io/apimachinery/pkg/util/duration's HumanDuration test,
// which is what kubectl's AGE column prints.
test('humanDuration matches kubectl', () => {
  const h = 3600;
  const cases = [
    [1, '1s'], [70, '70s'], [190, '3m10s'], [70 * 60, '70m'], [47 * h, '47h'],
    [49 * h, '2d1h'], [(8 * 24 + 2) * h, '8d'], [367 * 24 * h, '367d'],
    [(365 * 2 * 24 + 25) * h, '2y1d'], [(365 * 8 * 24 + 2) * h, '8y'],
    [-0.5, '0s'], [-2, '<invalid>'], [10 * 60, '10m'], [9 * 60, '9m'], [7 * h + 60, '7h1m'],
  ];
  for (const [s, want] of cases) assert.equal(humanDuration(s), want, `${s}s`);
});

test('parseQuantity reads the API\'s quantities', () => {
  const cases = [
    ['100m', 0.1], ['2', 2], ['1.5', 1.5], ['64Mi', 64 * 1024 ** 2], ['1Gi', 1024 ** 3],
    ['1G', 1e9], ['500k', 5e5], ['1e3', 1000], ['250u', 0.00025], ['', 0], [undefined, 0], [3, 3],
  ];
  for (const [q, want] of cases) assert.ok(Math.abs(parseQuantity(q) - want) < 1e-9, `${q}: ${parseQuantity(q)} != ${want}`);
});

test('formatBytes and formatCPU', () => {
  assert.equal(formatBytes(0), '0B');
  assert.equal(formatBytes(8 * 1024 ** 3), '8Gi');
  assert.equal(formatBytes(4.7 * 1024 ** 3), '4.7Gi');
  assert.equal(formatBytes(32 * 1024 ** 3), '32Gi');
  assert.equal(formatBytes(1536 * 1024), '1.5Mi');
  assert.equal(formatCPU(0.25), '250m');
  assert.equal(formatCPU(4), '4');
  assert.equal(formatCPU(3.75), '3.75');
});

test('resourcePath builds core and group paths', () => {
  assert.equal(resourcePath({ version: 'v1', resource: 'pods', namespace: 'ns', name: 'p', subresource: 'log' }), '/api/v1/namespaces/ns/pods/p/log');
  assert.equal(resourcePath({ group: 'core', version: 'v1', resource: 'nodes', name: 'n1' }), '/api/v1/nodes/n1');
  assert.equal(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'a b' }), '/apis/apps/v1/namespaces/a%20b/deployments');
  assert.equal(objectKey({ metadata: { namespace: 'ns', name: 'x' } }), 'ns/x');
  assert.equal(objectKey({ metadata: { name: 'node-1' } }), 'node-1');
});
