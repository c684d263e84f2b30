package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var auditRounds = flag.Int("audit-rounds", 2, "rounds of the audit-cost phase (0 skips it): each creates ConfigMaps on a fresh server without auditing, then on one auditing at Metadata level")

// metadataPolicy audits every request at Metadata level, every stage:
// the cheapest level that records anything, applied to everything.
const metadataPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// auditCost measures ConfigMap creates on fresh servers, alternately
// without auditing and with every request audited at Metadata level to a
// file in the server's data directory (two events per create). Rounds
// alternate so that a drift of the machine falls on both sides; the
// results are summed over the rounds.
func auditCost(ctx context.Context, payload string) (plain, audited result, logBytes int64, err error) {
	withAudit := func(dir string) ([]string, error) {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(metadataPolicy), 0o600); err != nil {
			return nil, err
		}
		return []string{"--audit-policy-file", policy, "--audit-log-path", filepath.Join(dir, "audit.log")}, nil
	}
	plain, audited = result{name: "API create ConfigMap, no audit"}, result{name: "API create ConfigMap, audit Metadata"}
	for round := 0; round < *auditRounds; round++ {
		for _, side := range []struct {
			into  *result
			flags func(string) ([]string, error)
		}{{&plain, nil}, {&audited, withAudit}} {
			r, size, err := createOnFreshServer(ctx, side.into.name, payload, side.flags)
			if err != nil {
				return plain, audited, 0, err
			}
			fmt.Println(r)
			side.into.add(r)
			logBytes += size
		}
	}
	return plain, audited, logBytes, nil
}

// createOnFreshServer starts a server with the given flags, lets it
// settle, runs the ConfigMap create phase of the main benchmark, and
// reports the size of its audit log, if any.
func createOnFreshServer(ctx context.Context, name, payload string, flags func(string) ([]string, error)) (result, int64, error) {
	srv, err := startServer(flags)
	if err != nil {
		return result{}, 0, err
	}
	defer srv.stop()
	// The controllers' start-up writes are over within a few seconds.
	time.Sleep(5 * time.Second)
	cs, err := clients(filepath.Join(srv.dataDir, "kubeconfig"), *concurrency)
	if err != nil {
		return result{}, 0, err
	}
	if _, err := cs[0].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return result{}, 0, err
	}
	r := hammer(name, len(cs), *duration, func(w, i int) error {
		_, err := cs[w].CoreV1().ConfigMaps("bench").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", w, i), Labels: map[string]string{"bench": "yes"}},
			Data:       map[string]string{"payload": payload},
		}, metav1.CreateOptions{})
		return err
	})
	var size int64
	if st, err := os.Stat(filepath.Join(srv.dataDir, "audit.log")); err == nil {
		size = st.Size()
	}
	return r, size, nil
}

// add folds another run of the same phase into r: operations, time and
// errors add up; the percentiles kept are the worse of the two.
func (r *result) add(o result) {
	r.ops += o.ops
	r.elapsed += o.elapsed
	r.errors += o.errors
	r.p50, r.p99 = max(r.p50, o.p50), max(r.p99, o.p99)
	r.throughput = float64(r.ops) / r.elapsed.Seconds()
}
