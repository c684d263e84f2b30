package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	auditRounds = flag.Int("audit-rounds", 3, "rounds of the audit-cost phase (0 skips it): each creates ConfigMaps on a fresh server without auditing, then on one auditing at Metadata level")
	auditOnly   = flag.Bool("audit-only", false, "run the audit-cost phase alone")
	auditLogDir = flag.String("audit-log-dir", "", "directory for the audited server's log (its data directory, beside etcd, when empty)")
)

// runAuditCost runs the audit-cost phase and prints its summary.
func runAuditCost(ctx context.Context, payload string) error {
	plain, audited, ratios, logBytes, err := auditCost(ctx, payload)
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Println(plain)
	fmt.Println(audited)
	where := "beside etcd's data"
	if *auditLogDir != "" {
		where = "in " + *auditLogDir
	}
	fmt.Printf("API create, audit Metadata / no audit: %.2f (%d rounds of %s, log %s, %.0f bytes of log per create)\n",
		audited.throughput/plain.throughput, *auditRounds, *duration, where, float64(logBytes)/float64(max(audited.ops, 1)))
	var each []string
	for _, r := range ratios {
		each = append(each, fmt.Sprintf("%.2f", r))
	}
	slices.Sort(ratios)
	fmt.Printf("  per round: %s; median %.2f\n", strings.Join(each, " "), ratios[len(ratios)/2])
	return nil
}

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
// results are summed over the rounds, and each round's ratio is kept too,
// as a shared machine's bursts can swing a single round.
func auditCost(ctx context.Context, payload string) (plain, audited result, ratios []float64, logBytes int64, err error) {
	withAudit := func(dir string) ([]string, error) {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(metadataPolicy), 0o600); err != nil {
			return nil, err
		}
		return []string{"--audit-policy-file", policy, "--audit-log-path", auditLogPath(dir)}, nil
	}
	plain, audited = result{name: "API create ConfigMap, no audit"}, result{name: "API create ConfigMap, audit Metadata"}
	for round := 0; round < *auditRounds; round++ {
		var pair [2]float64
		for i, side := range []struct {
			into  *result
			flags func(string) ([]string, error)
		}{{&plain, nil}, {&audited, withAudit}} {
			r, size, err := createOnFreshServer(ctx, side.into.name, payload, side.flags)
			if err != nil {
				return plain, audited, nil, 0, err
			}
			fmt.Println(r)
			side.into.add(r)
			pair[i] = r.throughput
			logBytes += size
		}
		ratios = append(ratios, pair[1]/pair[0])
	}
	return plain, audited, ratios, logBytes, nil
}

// createOnFreshServer starts a server with the given flags, lets it
// settle, runs the ConfigMap create phase of the main benchmark, and
// reports the size of its audit log, if any.
func createOnFreshServer(ctx context.Context, name, payload string, flags func(string) ([]string, error)) (result, int64, error) {
	// A free port for cluster DNS: these servers come and go while the
	// machine may run another.
	withFreeDNS := func(dir string) ([]string, error) {
		args := []string{"--cluster-dns-port", "0"}
		if flags == nil {
			return args, nil
		}
		more, err := flags(dir)
		return append(args, more...), err
	}
	srv, err := startServer(withFreeDNS)
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
	r := hammer(name, len(cs), *duration, createConfigMap(ctx, cs, payload))
	var size int64
	if flags != nil {
		path := auditLogPath(srv.dataDir)
		if st, err := os.Stat(path); err == nil {
			size = st.Size()
		}
		if *auditLogDir != "" {
			os.Remove(path)
		}
	}
	return r, size, nil
}

// auditLogPath is where the audited server with data directory dir
// writes its log.
func auditLogPath(dir string) string {
	if *auditLogDir != "" {
		return filepath.Join(*auditLogDir, filepath.Base(dir)+"-audit.log")
	}
	return filepath.Join(dir, "audit.log")
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
