package volume

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orca-project/orca/internal/kubelet/volume/atomicdir"
)

// Certificates is what clusterTrustBundle and podCertificate projections
// read and write through the API (the kubelet implements it with a
// client). Missing objects are NotFound errors.
type Certificates interface {
	ClusterTrustBundle(ctx context.Context, name string) (*certificatesv1.ClusterTrustBundle, error)
	// ClusterTrustBundles lists the bundles of a signer.
	ClusterTrustBundles(ctx context.Context, signerName string) ([]certificatesv1.ClusterTrustBundle, error)
	ServiceAccount(ctx context.Context, namespace, name string) (*v1.ServiceAccount, error)
	Node(ctx context.Context, name string) (*v1.Node, error)
	CreatePodCertificateRequest(ctx context.Context, pcr *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error)
	PodCertificateRequest(ctx context.Context, namespace, name string) (*certificatesv1.PodCertificateRequest, error)
}

var errNoCertificates = errors.New("certificate projections are not supported by this node")

// trustBundlePayload is a clusterTrustBundle source's file: the
// certificates of the bundle it names, or of every bundle of its signer
// that its label selector matches (none when the selector is unset). An
// optional source that finds nothing writes an empty file, as upstream.
func (m *Manager) trustBundlePayload(ctx context.Context, src *v1.ClusterTrustBundleProjection, mode int32) (map[string]atomicdir.File, error) {
	if m.Certificates == nil {
		return nil, errNoCertificates
	}
	optional := src.Optional != nil && *src.Optional
	var bundles []string
	switch {
	case src.Name != nil:
		b, err := m.Certificates.ClusterTrustBundle(ctx, *src.Name)
		switch {
		case apierrors.IsNotFound(err) && optional:
		case err != nil:
			return nil, fmt.Errorf("while getting ClusterTrustBundle by name: %w", err)
		default:
			bundles = append(bundles, b.Spec.TrustBundle)
		}
	case src.SignerName != nil:
		var sel labels.Selector = labels.Nothing()
		if src.LabelSelector != nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(src.LabelSelector); err != nil {
				return nil, fmt.Errorf("while parsing label selector: %w", err)
			}
		}
		all, err := m.Certificates.ClusterTrustBundles(ctx, *src.SignerName)
		if err != nil {
			return nil, fmt.Errorf("while listing ClusterTrustBundles by signer name: %w", err)
		}
		for _, b := range all {
			if b.Spec.SignerName == *src.SignerName && sel.Matches(labels.Set(b.Labels)) {
				bundles = append(bundles, b.Spec.TrustBundle)
			}
		}
		if len(bundles) == 0 && !optional {
			return nil, errors.New("combination of signerName and labelSelector matched zero ClusterTrustBundles")
		}
	}
	return map[string]atomicdir.File{src.Path: {Data: TrustAnchors(bundles...), Mode: fileMode(mode)}}, nil
}

// TrustAnchors normalises bundles into one PEM file, as upstream's
// kubelet: certificates only, without headers or text between them, each
// once, in the order first seen.
func TrustAnchors(bundles ...string) []byte {
	var out []byte
	seen := map[string]bool{}
	for _, b := range bundles {
		rest := []byte(b)
		for {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if block.Type != "CERTIFICATE" || seen[string(block.Bytes)] {
				continue
			}
			seen[string(block.Bytes)] = true
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: block.Bytes})...)
		}
	}
	if out == nil {
		out = []byte{}
	}
	return out
}
