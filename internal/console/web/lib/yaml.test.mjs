// Tests of lib/yaml.js's diff and text helpers; run with
// `node --test internal/console/web/lib/`. No DOM: renderDiff is left to
// the browser tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  diffLines, foldContext, lines, removeBlock, stripManagedFields, forEditing,
  identity, documents, splitAPIVersion, unchanged,
} from './yaml.js';

// apply replays a diff: the context and deletions must be a, the context
// and insertions b.
function check(a, b) {
  const ops = diffLines(a, b);
  assert.deepEqual(ops.filter((o) => o.op !== '+').map((o) => o.text), a, 'old side');
  assert.deepEqual(ops.filter((o) => o.op !== '-').map((o) => o.text), b, 'new side');
  return ops;
}

// lcs is the textbook O(NM) longest common subsequence, the reference a
// shortest edit script must agree with.
function lcs(a, b) {
  const t = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
    }
  }
  return t[0][0];
}

test('diff of small cases', () => {
  const cases = [
    [[], []],
    [[], ['a']],
    [['a'], []],
    [['a'], ['a']],
    [['a'], ['b']],
    [['a', 'b', 'c'], ['a', 'c']],
    [['a', 'c'], ['a', 'b', 'c']],
    ['abcabba'.split(''), 'cbabac'.split('')],
    [['x', 'x', 'x'], ['x']],
    [['a', 'b'], ['b', 'a']],
  ];
  for (const [a, b] of cases) {
    const ops = check(a, b);
    const edits = ops.filter((o) => o.op !== ' ').length;
    assert.equal(edits, a.length + b.length - 2 * lcs(a, b), `minimal for ${a}|${b}`);
  }
});

test('a change reads as deletion then insertion', () => {
  const ops = diffLines('a\nb\nc\n', 'a\nB\nc\n');
  assert.deepEqual(ops, [
    { op: ' ', text: 'a' }, { op: '-', text: 'b' }, { op: '+', text: 'B' }, { op: ' ', text: 'c' },
  ]);
});

test('random edits are minimal and replay', () => {
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  for (let round = 0; round < 300; round++) {
    const a = Array.from({ length: rnd(30) }, () => 'l' + rnd(6));
    const b = a.slice();
    for (let e = rnd(8); e > 0; e--) {
      const at = rnd(b.length + 1);
      if (rnd(2) && b.length) b.splice(at, 1); else b.splice(at, 0, 'l' + rnd(6));
    }
    const ops = check(a, b);
    assert.equal(ops.filter((o) => o.op !== ' ').length, a.length + b.length - 2 * lcs(a, b));
  }
});

test('a large document with a small edit is fast', () => {
  const a = Array.from({ length: 5000 }, (_, i) => `  key${i}: value${i}`);
  const b = a.slice();
  b[100] = '  key100: changed';
  b.splice(4000, 0, '  added: line');
  const t0 = performance.now();
  const ops = check(a, b);
  assert.ok(performance.now() - t0 < 500);
  assert.equal(ops.filter((o) => o.op !== ' ').length, 3);
  assert.ok(!unchanged(ops));
  assert.ok(unchanged(diffLines(a, a)));
});

test('documents with nothing in common are diffed as a replacement, quickly', () => {
  const a = Array.from({ length: 4000 }, (_, i) => `a${i}`);
  const b = Array.from({ length: 4000 }, (_, i) => `b${i}`);
  b[2000] = 'a10';
  const t0 = performance.now();
  const ops = check(a, b);
  assert.ok(performance.now() - t0 < 2000);
  assert.equal(ops.filter((o) => o.op === '-').length, 4000);
});

test('folding keeps context around changes', () => {
  const a = Array.from({ length: 20 }, (_, i) => String(i));
  const b = a.slice();
  b[10] = 'ten';
  const f = foldContext(diffLines(a, b), 2);
  assert.equal(f[0].fold.length, 8);
  assert.deepEqual(f.slice(1, 7).map((o) => o.op + o.text), [' 8', ' 9', '-10', '+ten', ' 11', ' 12']);
  assert.equal(f[7].fold.length, 7);
  // A lone unchanged line between two hunks is shown, not folded.
  const c = a.slice();
  c[3] = 'x'; c[9] = 'y';
  assert.ok(foldContext(diffLines(a, c), 2).every((o) => !o.fold || o.fold.length > 1));
});

const served = `apiVersion: v1
data:
  a: "1"
kind: ConfigMap
metadata:
  creationTimestamp: "2026-11-29T09:00:00Z"
  labels:
    managedFields: not-this-one
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
        f:a: {}
    manager: kubectl
    operation: Apply
    time: "2026-11-29T09:00:00Z"
  name: demo
  namespace: default
  resourceVersion: "42"
  uid: 0b1c
status:
  phase: Active
`;

test('managedFields and the fields an edit leaves out are removed', () => {
  assert.equal(stripManagedFields(served), served.replace(/  managedFields:\n(  - .*\n|    .*\n)*/, ''));
  const e = forEditing(served);
  assert.ok(!e.includes('fieldsV1'));
  assert.ok(e.includes('    managedFields: not-this-one'), 'a label of that name stays');
  assert.ok(!e.includes('resourceVersion'));
  assert.ok(!e.includes('status:'));
  assert.ok(e.includes('  uid: 0b1c'));
  assert.ok(e.endsWith('uid: 0b1c\n'));
  assert.equal(removeBlock('a: 1\n', ['metadata', 'x']), 'a: 1\n');
  assert.deepEqual(lines('a\nb\n'), ['a', 'b']);
});

test('identity reads where a document goes', () => {
  assert.deepEqual(identity(`# a comment
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    name: not-the-name
  name: web   # trailing comment
  namespace: "team-a"
spec: {}
`), { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'team-a', generateName: '' });
  assert.equal(identity('kind: ConfigMap\nmetadata: {name: x, namespace: y}\napiVersion: v1').namespace, 'y');
  assert.equal(identity('{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"p-"}}').generateName, 'p-');
  assert.deepEqual(splitAPIVersion('v1'), { group: '', version: 'v1' });
  assert.deepEqual(splitAPIVersion('apps/v1'), { group: 'apps', version: 'v1' });
});

test('documents splits at ---', () => {
  const d = documents('---\na: 1\n---\n# only a comment\n---\nb: 2\n...\n');
  assert.deepEqual(d, ['a: 1', 'b: 2\n']);
});
