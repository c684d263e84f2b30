package console

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// tokens answers TokenRequests as the API server does, with the
// expiration asked for.
func tokens(client *fake.Clientset, now time.Time) *[]int64 {
	var asked []int64
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		asked = append(asked, *tr.Spec.ExpirationSeconds)
		tr.Status = authenticationv1.TokenRequestStatus{
			Token:               "tok-" + a.(k8stesting.CreateAction).GetNamespace(),
			ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)),
		}
		return true, tr, nil
	})
	return &asked
}

func TestLoginLink(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, server, want string
		narrowed           bool
		wantErr            bool
	}{
		{name: "fresh cluster", server: "https://10.0.0.5:6443", want: "https://10.0.0.5:6443/ui/#token=tok-kube-system"},
		{name: "a path in the server's URL is not the console's", server: "https://example.test:6443/prefix", want: "https://example.test:6443/ui/#token=tok-kube-system"},
		{name: "binding kept as the operator left it", server: "https://[fd00::1]:6443", narrowed: true, want: "https://[fd00::1]:6443/ui/#token=tok-kube-system"},
		{name: "not a URL", server: "10.0.0.5:6443", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.narrowed {
				_, _ = client.RbacV1().ClusterRoleBindings().Create(context.Background(), &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: AdminServiceAccount},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				}, metav1.CreateOptions{})
			}
			asked := tokens(client, now)
			link, expires, err := LoginLink(context.Background(), client, tc.server, 30*time.Minute)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if link != tc.want {
				t.Errorf("link %q, want %q", link, tc.want)
			}
			if !expires.Equal(now.Add(30*time.Minute)) || len(*asked) != 1 || (*asked)[0] != 1800 {
				t.Errorf("expires %v after asking for %v seconds", expires, *asked)
			}
			if _, err := client.CoreV1().ServiceAccounts(AdminNamespace).Get(context.Background(), AdminServiceAccount, metav1.GetOptions{}); err != nil {
				t.Errorf("service account: %v", err)
			}
			crb, err := client.RbacV1().ClusterRoleBindings().Get(context.Background(), AdminServiceAccount, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantRole := "cluster-admin"
			if tc.narrowed {
				wantRole = "view"
			}
			if crb.RoleRef.Name != wantRole {
				t.Errorf("binding to %q, want %q", crb.RoleRef.Name, wantRole)
			}
			// A second link reuses the account and binding.
			if _, _, err := LoginLink(context.Background(), client, tc.server, 30*time.Minute); err != nil {
				t.Errorf("second link: %v", err)
			}
		})
	}
}
