package apiserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecodeContinue(t *testing.T) {
	const prefix = "/registry/configmaps/ns/"
	tok := func(doc string) string { return base64.RawURLEncoding.EncodeToString([]byte(doc)) }
	cases := []struct {
		name, token string
		rev         int64
		start, err  string
	}{
		{"own token", encodeContinue(42, prefix+"b\x00", prefix), 42, prefix + "b\x00", ""},
		{"inconsistent continuation reads the latest", encodeContinue(latestRevision, prefix+"b\x00", prefix), 0, prefix + "b\x00", ""},
		{"leading slash", tok(`{"v":"meta.k8s.io/v1","rv":7,"start":"/b"}`), 7, prefix + "b", ""},
		{"no revision", tok(`{"v":"meta.k8s.io/v1","start":"b"}`), 0, "", "incorrect encoded start resourceVersion"},
		{"no start", tok(`{"v":"meta.k8s.io/v1","rv":7}`), 0, "", "encoded start key empty"},
		{"out of the namespace", tok(`{"v":"meta.k8s.io/v1","rv":7,"start":"../other/a"}`), 0, "", "continue key is not valid: ../other/a"},
		{"unknown version", tok(`{"v":"meta.k8s.io/v2","rv":7,"start":"b"}`), 0, "", "server does not recognize this encoded version"},
		{"not base64", "!!", 0, "", "continue key is not valid"},
	}
	for _, c := range cases {
		rev, start, err := decodeContinue(c.token, prefix)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %v, want an error with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || rev != c.rev || start != c.start {
			t.Errorf("%s: got %d %q %v, want %d %q", c.name, rev, start, err, c.rev, c.start)
		}
	}
}

// Once etcd compacts a paginated list's revision away, continuing is 410
// with a token that lists the rest at the latest revision, as upstream's
// chunking conformance spec expects: the remaining items, counted, and
// then pages consistent with each other.
func TestListContinueAfterCompaction(t *testing.T) {
	srv := startTestServer(t, Config{})
	ctx := context.Background()
	if _, err := srv.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "page"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := srv.client.CoreV1().ConfigMaps("page")
	const total = 10
	for i := 0; i < total; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if first.RemainingItemCount == nil || *first.RemainingItemCount != total-3 {
		t.Fatalf("first page: remainingItemCount %v", first.RemainingItemCount)
	}

	// A write elsewhere moves the revision on; compacting to it removes
	// the first page's revision.
	if _, err := srv.client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := srv.store.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.store.Client().Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}

	_, err = cms.List(ctx, metav1.ListOptions{Limit: 3, Continue: first.Continue})
	var status apierrors.APIStatus
	if !apierrors.IsResourceExpired(err) || !errors.As(err, &status) || status.Status().Continue == "" {
		t.Fatalf("continue after compaction: want 410 with a continue token, got %v", err)
	}
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 3, ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "The resourceVersion for the provided list is too old.") {
		t.Errorf("exact list at a compacted revision: %v", err)
	}

	opts := metav1.ListOptions{Limit: 3, Continue: status.Status().Continue}
	found := len(first.Items)
	var rv string
	for {
		page, err := cms.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rv == "" && page.ResourceVersion == first.ResourceVersion:
			t.Errorf("the inconsistent continuation was read at the compacted revision %s", rv)
		case rv != "" && page.ResourceVersion != rv:
			t.Errorf("pages after the continuation at %s and %s", rv, page.ResourceVersion)
		}
		rv = page.ResourceVersion
		for _, cm := range page.Items {
			if want := fmt.Sprintf("cm-%02d", found); cm.Name != want {
				t.Fatalf("item %d is %s, want %s", found, cm.Name, want)
			}
			found++
		}
		if page.Continue == "" {
			if page.RemainingItemCount != nil {
				t.Errorf("last page has remainingItemCount %d", *page.RemainingItemCount)
			}
			break
		}
		if page.RemainingItemCount == nil || int(*page.RemainingItemCount)+found != total {
			t.Errorf("after %d items remainingItemCount is %v", found, page.RemainingItemCount)
		}
		opts.Continue = page.Continue
	}
	if found != total {
		t.Errorf("listed %d items, want %d", found, total)
	}
}

// A continue token continues within the list it came from: a token of
// one namespace read in another lists only that other namespace.
func TestContinueStaysInNamespace(t *testing.T) {
	srv := startTestServer(t, Config{})
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		if _, err := srv.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := srv.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	page, err := srv.client.CoreV1().ConfigMaps("a").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := srv.client.CoreV1().ConfigMaps("b").List(ctx, metav1.ListOptions{Limit: 10, Continue: page.Continue})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range rest.Items {
		if cm.Namespace != "b" {
			t.Errorf("continuing in b listed %s/%s", cm.Namespace, cm.Name)
		}
	}
	if len(rest.Items) != 2 {
		t.Errorf("continuing in b after cm-0 listed %d items, want 2", len(rest.Items))
	}
}
