package server

import (
	"context"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/ingress"
)

// IngressClass is the class of Orca's built-in ingress, marked the
// cluster's default so that an Ingress naming no class is served, as
// k3s's Traefik class is.
func IngressClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ingress.ClassName,
			Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"},
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "orca"},
		},
		Spec: networkingv1.IngressClassSpec{Controller: ingress.ControllerName},
	}
}

// ensureIngressClass creates the ingress's IngressClass at start-up when
// it is missing. One that exists is left as it is: an administrator may
// have made another class the default.
func ensureIngressClass(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int) error {
	client, err := adminClient(opts, tlsDir, ca, port, "orca-ingress-class", 5, 10)
	if err != nil {
		return err
	}
	return retryFor(ctx, 200*time.Millisecond, "IngressClass "+ingress.ClassName, func() error {
		_, err := client.NetworkingV1().IngressClasses().Create(ctx, IngressClass(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}
