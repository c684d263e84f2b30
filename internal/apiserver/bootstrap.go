package apiserver

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultNamespaces exist in every cluster, as upstream creates them.
var defaultNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// bootstrap creates what a new cluster starts with. It is idempotent, so
// every server runs it on every start.
func (s *Server) bootstrap(ctx context.Context) error {
	nsRes := s.resources[corev1.SchemeGroupVersion.WithResource("namespaces")]
	if nsRes == nil {
		return nil
	}
	for _, name := range defaultNamespaces {
		if _, _, ok := nsRes.cache.Get(nsRes.key("", name)); ok {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := s.create(ctx, nsRes, "", ns, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := s.publishAuthentication(ctx); err != nil {
		return err
	}
	return s.reconcileKubernetesService(ctx)
}

// publishAuthentication writes kube-system's
// extension-apiserver-authentication ConfigMap, where extension API
// servers learn, as from upstream's, which client certificates and which
// front proxy's user headers to trust.
func (s *Server) publishAuthentication(ctx context.Context) error {
	fp := s.cfg.FrontProxy
	if fp == nil {
		return nil
	}
	list := func(v ...string) string {
		data, _ := json.Marshal(v)
		return string(data)
	}
	data := map[string]string{
		"client-ca-file":                     string(fp.ClientCAPEM),
		"requestheader-client-ca-file":       string(fp.CAPEM),
		"requestheader-allowed-names":        list(fp.AllowedNames...),
		"requestheader-username-headers":     list("X-Remote-User"),
		"requestheader-uid-headers":          list("X-Remote-Uid"),
		"requestheader-group-headers":        list("X-Remote-Group"),
		"requestheader-extra-headers-prefix": list("X-Remote-Extra-"),
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "extension-apiserver-authentication", Namespace: metav1.NamespaceSystem}, Data: data}
	return s.putSystemObject(ctx, corev1.SchemeGroupVersion.WithResource("configmaps"), cm, func(cur runtime.Object) {
		cur.(*corev1.ConfigMap).Data = data
	})
}

// compactLoop compacts etcd's history every interval up to the revision
// seen one interval earlier, so that watchers and paginated lists always
// have at least one interval of history, as upstream's compactor keeps.
func (s *Server) compactLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.CompactInterval)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, err := s.cfg.Store.CurrentRevision(ctx)
		if err != nil {
			s.log.Warn("compaction: read revision", "err", err)
			continue
		}
		if last > 0 {
			if _, err := s.cfg.Store.Client().Compact(ctx, last); err != nil {
				s.log.Warn("compaction failed", "revision", last, "err", err)
			} else {
				s.metrics.compactions.Inc()
				s.log.Debug("compacted etcd history", "revision", last)
			}
		}
		last = cur
	}
}
