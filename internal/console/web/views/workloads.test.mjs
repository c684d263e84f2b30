// Tests of the workload and pod views' pure parts (kubectl's pod STATUS,
// rollout status words, job columns, the search grammar, the patches the
// actions send); run with `node --test internal/console/web/views/`. The
// views themselves are left to the browser tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';

// The modules read sessionStorage only when mounted; importing needs none.
const { KINDS, parseSearch, labelSelectorString, jobStatus, jobCompletions } = await import('./workloads.js');
const { podSummary } = await import('./pods.js');
const { rollbackPatch, restartPatch, jobFromCronJob, deploymentRevisions } = await import('./workload.js');

const meta = (extra) => ({ name: 'p', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z', ...extra });
const pod = (spec, status, m) => ({ metadata: meta(m), spec: { containers: [{ name: 'app' }], ...spec }, status });

test('pod STATUS as kubectl prints it', () => {
  const cases = [
    ['pending', pod({}, { phase: 'Pending' }), 'Pending', '0/1'],
    ['running', pod({}, { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: {} } }] }), 'Running', '1/1'],
    ['crash loop', pod({}, { phase: 'Running', containerStatuses: [{ name: 'app', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } }] }), 'CrashLoopBackOff', '0/1'],
    ['completed', pod({}, { phase: 'Succeeded', containerStatuses: [{ name: 'app', state: { terminated: { reason: 'Completed', exitCode: 0 } } }] }), 'Completed', '0/1'],
    ['exit code without reason', pod({}, { phase: 'Failed', containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 2 } } }] }), 'ExitCode:2', '0/1'],
    ['signal without reason', pod({}, { phase: 'Failed', containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 137, signal: 9 } } }] }), 'Signal:9', '0/1'],
    ['init 1 of 2', pod({ initContainers: [{ name: 'a' }, { name: 'b' }] }, {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }, { name: 'b', state: { running: {} } }],
    }), 'Init:1/2', '0/1'],
    ['init crash loop', pod({ initContainers: [{ name: 'a' }] }, {
      phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
    }), 'Init:CrashLoopBackOff', '0/1'],
    ['init failed', pod({ initContainers: [{ name: 'a' }] }, {
      phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { terminated: { exitCode: 1, reason: 'Error' } } }],
    }), 'Init:Error', '0/1'],
    ['init PodInitializing', pod({ initContainers: [{ name: 'a' }] }, {
      phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { waiting: { reason: 'PodInitializing' } } }],
    }), 'Init:0/1', '0/1'],
    ['sidecar counts towards READY', pod({ initContainers: [{ name: 's', restartPolicy: 'Always' }] }, {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }],
      initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} } }],
      containerStatuses: [{ name: 'app', ready: true, state: { running: {} } }],
    }), 'Running', '2/2'],
    ['terminating', pod({}, { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, state: { running: {} } }] }, { deletionTimestamp: '2026-01-01T00:01:00Z' }), 'Terminating', '1/1'],
    ['terminal pod is not Terminating', pod({}, { phase: 'Succeeded', containerStatuses: [{ name: 'app', state: { terminated: { reason: 'Completed', exitCode: 0 } } }] }, { deletionTimestamp: '2026-01-01T00:01:00Z' }), 'Completed', '0/1'],
    ['node lost', pod({}, { phase: 'Running', reason: 'NodeLost' }, { deletionTimestamp: '2026-01-01T00:01:00Z' }), 'Unknown', '0/1'],
    ['scheduling gated', pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }), 'SchedulingGated', '0/1'],
    ['evicted', pod({}, { phase: 'Failed', reason: 'Evicted' }), 'Evicted', '0/1'],
    ['completed next to a running one', pod({ containers: [{ name: 'a' }, { name: 'b' }] }, {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [
        { name: 'a', state: { terminated: { reason: 'Completed', exitCode: 0 } } },
        { name: 'b', ready: true, state: { running: {} } },
      ],
    }), 'NotReady', '1/2'],
  ];
  for (const [what, p, status, ready] of cases) {
    const s = podSummary(p);
    assert.equal(s.status, status, what);
    assert.equal(s.ready, ready, what);
  }
});

test('pod RESTARTS with the last restart', () => {
  const recent = new Date(Date.now() - 90 * 1000).toISOString();
  const s = podSummary(pod({}, {
    phase: 'Running',
    containerStatuses: [{ name: 'app', ready: true, restartCount: 3, state: { running: {} }, lastState: { terminated: { finishedAt: recent } } }],
  }));
  assert.equal(s.restarts, '3 (90s ago)');
  assert.equal(podSummary(pod({}, { phase: 'Running', containerStatuses: [{ name: 'app', restartCount: 2, state: { running: {} } }] })).restarts, '2');
});

const dep = (spec, status, m) => ({ metadata: { name: 'web', generation: 2, ...m }, spec: { replicas: 3, ...spec }, status: { observedGeneration: 2, ...status } });

test('deployment rollout status in kubectl rollout status words', () => {
  const r = KINDS.deployments.rollout;
  assert.equal(r(dep({}, { observedGeneration: 1 })).message, 'Waiting for deployment spec update to be observed...');
  assert.equal(r(dep({}, { updatedReplicas: 1, replicas: 3 })).message, 'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...');
  assert.equal(r(dep({}, { updatedReplicas: 3, replicas: 4 })).message, 'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...');
  assert.equal(r(dep({}, { updatedReplicas: 3, replicas: 3, availableReplicas: 2 })).message, 'Waiting for deployment "web" rollout to finish: 2 of 3 updated replicas are available...');
  const done = r(dep({}, { updatedReplicas: 3, replicas: 3, availableReplicas: 3 }));
  assert.equal(done.message, 'deployment "web" successfully rolled out');
  assert.ok(done.done);
  const late = r(dep({}, { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }));
  assert.ok(late.failed);
  assert.equal(late.message, 'error: deployment "web" exceeded its progress deadline');
});

test('statefulset and daemonset rollout status', () => {
  const sts = (spec, status) => ({ metadata: { name: 'db', generation: 1 }, spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, ...spec }, status: { observedGeneration: 1, ...status } });
  const s = KINDS.statefulsets.rollout;
  assert.equal(s(sts({}, { readyReplicas: 1 })).message, 'Waiting for 2 pods to be ready...');
  assert.equal(s(sts({}, { readyReplicas: 3, updatedReplicas: 3 })).message, 'partitioned roll out complete: 3 new pods have been updated...');
  assert.equal(s(sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }, { readyReplicas: 3, updatedReplicas: 1 })).message,
    'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...');
  assert.equal(s(sts({ updateStrategy: { type: 'OnDelete' } }, {})).message, 'error: rollout status is only available for RollingUpdate strategy type');
  const ds = (status) => ({ metadata: { name: 'agent', generation: 1 }, spec: { updateStrategy: { type: 'RollingUpdate' } }, status: { observedGeneration: 1, desiredNumberScheduled: 2, ...status } });
  const d = KINDS.daemonsets.rollout;
  assert.equal(d(ds({ updatedNumberScheduled: 1 })).message, 'Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been updated...');
  assert.equal(d(ds({ updatedNumberScheduled: 2, numberAvailable: 1 })).message, 'Waiting for daemon set "agent" rollout to finish: 1 of 2 updated pods are available...');
  assert.equal(d(ds({ updatedNumberScheduled: 2, numberAvailable: 2 })).message, 'daemon set "agent" successfully rolled out');
});

test('job STATUS and COMPLETIONS', () => {
  const job = (spec, status, m) => ({ metadata: { name: 'j', ...m }, spec, status });
  assert.equal(jobStatus(job({}, { conditions: [{ type: 'Complete', status: 'True' }] })), 'Complete');
  assert.equal(jobStatus(job({}, { conditions: [{ type: 'Failed', status: 'True' }] }, { deletionTimestamp: 'x' })), 'Failed');
  assert.equal(jobStatus(job({}, {}, { deletionTimestamp: 'x' })), 'Terminating');
  assert.equal(jobStatus(job({}, { conditions: [{ type: 'Suspended', status: 'True' }] })), 'Suspended');
  assert.equal(jobStatus(job({}, {})), 'Running');
  assert.equal(jobCompletions(job({ completions: 3 }, { succeeded: 1 })), '1/3');
  assert.equal(jobCompletions(job({ parallelism: 4 }, {})), '0/1 of 4');
  assert.equal(jobCompletions(job({ parallelism: 1 }, { succeeded: 1 })), '1/1');
});

test('the search box: names, label and field selectors', () => {
  assert.deepEqual(parseSearch('Web'), { labelSelector: '', fieldSelector: '', name: 'web' });
  assert.deepEqual(parseSearch('app=web,spec.nodeName=n1'), { labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1', name: '' });
  assert.deepEqual(parseSearch('env in (a,b),!canary'), { labelSelector: 'env in (a,b),!canary', fieldSelector: '', name: '' });
  assert.equal(labelSelectorString({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['z', 'y'] }, { key: 'q', operator: 'Exists' }] }),
    'a=1,b=2,x notin (y,z),q');
});

const template = (image, hash) => ({
  metadata: { labels: { app: 'web', ...(hash ? { 'pod-template-hash': hash } : {}) } },
  spec: { containers: [{ name: 'web', image }] },
});

test('roll back a deployment as kubectl rollout undo does', () => {
  const d = {
    metadata: { name: 'web', annotations: { 'deployment.kubernetes.io/revision': '2', 'kubernetes.io/change-cause': 'v2', team: 'a' } },
    spec: { template: template('web:2') },
  };
  const rs = (rev, image, hash, annotations) => ({
    kind: 'ReplicaSet',
    metadata: { name: `web-${hash}`, annotations: { 'deployment.kubernetes.io/revision': String(rev), ...annotations } },
    spec: { replicas: 0, template: template(image, hash) },
  });
  const revs = deploymentRevisions([rs(1, 'web:1', 'aaa', { 'kubernetes.io/change-cause': 'v1' }), rs(2, 'web:2', 'bbb', {})]);
  assert.deepEqual(revs.map((r) => r.revision), [2, 1]);
  const p = rollbackPatch('deployments', d, revs[1]);
  assert.equal(p.type, 'json');
  assert.deepEqual(p.body[0], { op: 'replace', path: '/spec/template', value: template('web:1') });
  assert.deepEqual(p.body[1].value, { 'deployment.kubernetes.io/revision': '2', 'kubernetes.io/change-cause': 'v1' });
  assert.match(rollbackPatch('deployments', d, revs[0]).skip, /current template already matches revision 2/);
  assert.throws(() => rollbackPatch('deployments', { ...d, spec: { ...d.spec, paused: true } }, revs[1]), /cannot rollback a paused deployment/);
});

test('roll back a daemonset from its ControllerRevision', () => {
  const data = { spec: { template: { ...template('agent:1'), $patch: 'replace' } } };
  const rev = { revision: 1, source: { kind: 'ControllerRevision', metadata: { name: 'agent-1' }, data } };
  const p = rollbackPatch('daemonsets', { metadata: { name: 'agent' }, spec: { template: template('agent:2') } }, rev);
  assert.deepEqual(p, { type: 'strategic', body: data });
  assert.ok(rollbackPatch('daemonsets', { metadata: { name: 'agent' }, spec: { template: template('agent:1') } }, rev).skip);
});

test('restart and run-now send what kubectl sends', () => {
  assert.deepEqual(restartPatch(new Date('2026-11-29T10:00:00.123Z')),
    { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-29T10:00:00Z' } } } } });
  const cj = {
    metadata: { name: 'nightly', namespace: 'ops', uid: 'u1' },
    spec: { jobTemplate: { metadata: { labels: { a: 'b' }, annotations: { x: 'y' } }, spec: { template: template('job:1') } } },
  };
  const job = jobFromCronJob(cj, 'nightly-manual-1');
  assert.equal(job.metadata.name, 'nightly-manual-1');
  assert.equal(job.metadata.namespace, 'ops');
  assert.deepEqual(job.metadata.annotations, { 'cronjob.kubernetes.io/instantiate': 'manual', x: 'y' });
  assert.deepEqual(job.metadata.labels, { a: 'b' });
  assert.deepEqual(job.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'u1', controller: true }]);
  assert.deepEqual(job.spec, cj.spec.jobTemplate.spec);
});
