package console

import (
	"context"
	"fmt"
	"net/url"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The admin's sign-in tokens are a service account's, bound to
// cluster-admin: a TokenRequest gives a token that expires on its own
// and is never stored, unlike a client certificate (which a browser
// cannot present from a link anyway).
const (
	AdminNamespace      = "kube-system"
	AdminServiceAccount = "orca-console-admin"
	adminClusterRole    = "cluster-admin"
)

// LoginLink returns the console's sign-in link for the cluster's admin
// with a token valid for ttl, and when it expires. server is the API
// server's URL as the kubeconfig names it. The token goes in the
// fragment, which browsers never send, so it reaches no server's log.
func LoginLink(ctx context.Context, client kubernetes.Interface, server string, ttl time.Duration) (string, time.Time, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", time.Time{}, fmt.Errorf("the API server's address %q is not a URL", server)
	}
	if err := ensureAdmin(ctx, client); err != nil {
		return "", time.Time{}, err
	}
	seconds := int64(ttl / time.Second)
	tr, err := client.CoreV1().ServiceAccounts(AdminNamespace).CreateToken(ctx, AdminServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("request a token for %s/%s: %w", AdminNamespace, AdminServiceAccount, err)
	}
	link := url.URL{Scheme: "https", Host: u.Host, Path: Prefix, Fragment: "token=" + tr.Status.Token}
	return link.String(), tr.Status.ExpirationTimestamp.Time, nil
}

// ensureAdmin creates the admin's service account and its binding to
// cluster-admin when they are missing, and leaves them as they are
// otherwise (an operator may have narrowed the binding on purpose).
func ensureAdmin(ctx context.Context, client kubernetes.Interface) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: AdminServiceAccount, Namespace: AdminNamespace}}
	if _, err := client.CoreV1().ServiceAccounts(AdminNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", AdminNamespace, AdminServiceAccount, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: AdminServiceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: adminClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AdminServiceAccount, Namespace: AdminNamespace}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind %s/%s to %s: %w", AdminNamespace, AdminServiceAccount, adminClusterRole, err)
	}
	return nil
}
