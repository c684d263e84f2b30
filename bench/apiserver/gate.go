package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/auth/pki"
)

var (
	gateRounds = flag.Int("gate-rounds", 2, "rounds of the gate-cost phase (0 skips it): ConfigMap creates by an ordinary user on a fresh server with --authorization-mode AlwaysAllow and no audit, then on one with the default Node,RBAC and every request audited at Metadata level")
	gateOnly   = flag.Bool("gate-only", false, "run the gate-cost phase alone")
	gateAudit  = flag.Bool("gate-audit", true, "audit the gated side at Metadata level (false measures the authorizers alone)")
)

// runGateCost measures what the gate costs a user who is not in
// system:masters (whose requests skip authorization): creates with the
// default authorizers and Metadata auditing, against the same creates on
// a server that allows everything and audits nothing.
func runGateCost(ctx context.Context, payload string) error {
	gatedName := "API create ConfigMap as a user, Node,RBAC + audit Metadata"
	if !*gateAudit {
		gatedName = "API create ConfigMap as a user, Node,RBAC, no audit"
	}
	open, gated := result{name: "API create ConfigMap as a user, AlwaysAllow, no audit"}, result{name: gatedName}
	for round := 0; round < *gateRounds; round++ {
		for _, side := range []struct {
			into  *result
			flags func(string) ([]string, error)
		}{
			{&open, func(string) ([]string, error) { return []string{"--authorization-mode", "AlwaysAllow"}, nil }},
			{&gated, func(dir string) ([]string, error) {
				if !*gateAudit {
					return nil, nil
				}
				policy := filepath.Join(dir, "audit-policy.yaml")
				if err := os.WriteFile(policy, []byte(metadataPolicy), 0o600); err != nil {
					return nil, err
				}
				return []string{"--audit-policy-file", policy, "--audit-log-path", auditLogPath(dir)}, nil
			}},
		} {
			r, err := createAsUser(ctx, side.into.name, payload, side.flags)
			if err != nil {
				return err
			}
			fmt.Println(r)
			side.into.add(r)
		}
	}
	fmt.Println()
	fmt.Println(open)
	fmt.Println(gated)
	fmt.Printf("%s / AlwaysAllow, no audit: %.2f (target >= 0.90; %d rounds of %s)\n",
		gated.name, gated.throughput/open.throughput, *gateRounds, *duration)
	return nil
}

// createAsUser starts a fresh server, binds the user bench-user to edit in
// the bench namespace, and runs the ConfigMap create phase with that
// user's client certificate.
func createAsUser(ctx context.Context, name, payload string, flags func(string) ([]string, error)) (result, error) {
	srv, err := startServer(flags)
	if err != nil {
		return result{}, err
	}
	defer srv.stop()
	time.Sleep(5 * time.Second)
	admin, err := clients(filepath.Join(srv.dataDir, "kubeconfig"), 1)
	if err != nil {
		return result{}, err
	}
	if _, err := admin[0].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return result{}, err
	}
	if _, err := admin[0].RbacV1().RoleBindings("bench").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-user-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bench-user"}},
	}, metav1.CreateOptions{}); err != nil {
		return result{}, err
	}
	kc, err := userKubeconfig(srv.dataDir, "bench-user")
	if err != nil {
		return result{}, err
	}
	cs, err := clients(kc, *concurrency)
	if err != nil {
		return result{}, err
	}
	// The edit role is aggregated by a controller a moment after start.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := cs[0].CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return result{}, fmt.Errorf("bench-user cannot use its edit binding: %w", err)
		}
	}
	return hammer(name, len(cs), *duration, createConfigMap(ctx, cs, payload)), nil
}

// userKubeconfig writes a kubeconfig for user, with a client certificate
// the server's CA signs, beside the admin's.
func userKubeconfig(dataDir, user string) (string, error) {
	ca, err := pki.LoadOrCreateCA(filepath.Join(dataDir, "tls"), "ca", "orca-ca")
	if err != nil {
		return "", err
	}
	leaf, err := pki.LoadOrIssue(dataDir, user, ca, pki.LeafSpec{CommonName: user})
	if err != nil {
		return "", err
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		return "", err
	}
	for _, a := range cfg.AuthInfos {
		a.ClientCertificateData, a.ClientKeyData = leaf.CertPEM, leaf.KeyPEM
	}
	path := filepath.Join(dataDir, user+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
