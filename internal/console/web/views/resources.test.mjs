// Tests of the resources views' pure helpers; run with
// `node --test internal/console/web/`. Importing the view needs no DOM:
// its modules touch the page only when called.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLabelSelector, cellText, findResource, routeOf, schemaOf, groupLabel } from './resources.js';

test('label selectors are told from names', () => {
  for (const s of ['app=web', 'app==web', 'app!=web', '!canary', 'tier in (a,b)', 'env notin (prod)']) {
    assert.ok(isLabelSelector(s), s);
  }
  for (const s of ['web', 'web-1', 'kube-system/coredns', 'x.y']) assert.ok(!isLabelSelector(s), s);
});

test('cells print as kubectl prints them', () => {
  assert.equal(cellText(null), '<none>');
  assert.equal(cellText(undefined), '<none>');
  assert.equal(cellText(''), '');
  assert.equal(cellText(3), '3');
  assert.equal(cellText(false), 'false');
  assert.equal(cellText({ a: 1 }), '{"a":1}');
});

const all = [
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['list'] },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['list'] },
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ['list'] },
];

test('routes name kinds and objects', () => {
  assert.equal(findResource(all, 'core', 'v1', 'configmaps'), all[0]);
  assert.equal(findResource(all, 'apps', 'v1beta1', 'deployments'), all[1], 'another version of a known kind');
  assert.equal(findResource(all, 'apps', 'v1', 'nothing'), null);
  assert.equal(routeOf(all[0]), '#/resources/core/v1/configmaps');
  assert.equal(routeOf(all[0], 'default', 'a b'), '#/resources/core/v1/configmaps/default/a%20b');
  assert.equal(routeOf(all[2], '', 'kube-system'), '#/resources/core/v1/namespaces/kube-system');
  assert.equal(routeOf(all[1], 'ns', 'web'), '#/resources/apps/v1/deployments/ns/web');
  assert.equal(groupLabel(''), 'core (v1)');
});

test('the schema of a kind is found by its group-version-kind', () => {
  const doc = {
    components: {
      schemas: {
        'io.k8s.api.apps.v1.Deployment': { description: 'D', 'x-kubernetes-group-version-kind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }] },
        'io.k8s.api.core.v1.Pod': { description: 'P', 'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Pod' }] },
      },
    },
  };
  assert.equal(schemaOf(doc, 'apps', 'v1', 'Deployment').description, 'D');
  assert.equal(schemaOf(doc, '', 'v1', 'Pod').description, 'P');
  assert.equal(schemaOf(doc, 'apps', 'v1', 'Pod'), null);
});
