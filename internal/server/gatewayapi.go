package server

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/mod/semver"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/ingress"
	"github.com/orca-project/orca/internal/ingress/gateway/crds"
)

// GatewayClass is the class of Orca's built-in Gateway API controller.
func GatewayClass() *gwv1.GatewayClass {
	return &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: ingress.ClassName, Labels: map[string]string{"app.kubernetes.io/managed-by": "orca"}},
		Spec:       gwv1.GatewayClassSpec{ControllerName: ingress.GatewayControllerName, Description: ptrTo("Orca's built-in ingress on every node")},
	}
}

func ptrTo[T any](v T) *T { return &v }

// ensureGatewayAPI installs the Gateway API's standard-channel CRDs: a
// missing one is created, one of an older release of the same channel
// is brought up to Orca's, and any other (an experimental channel's, a
// newer release) is left as its installer put it. The GatewayClass orca
// is created once its CRD is established. It runs beside the server
// after start-up and retries until it holds, so that a slow API server
// delays only the Gateway API.
func ensureGatewayAPI(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int) error {
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "admin", "system:admin", []string{"system:masters"}, "orca-gateway-api", 5, 10)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	all, err := crds.All()
	if err != nil {
		return err
	}
	log := opts.Log.With("component", "gateway-api")
	for {
		err := installGatewayAPI(ctx, ext, gw, all)
		if err == nil {
			return nil
		}
		log.Warn("install the Gateway API; trying again", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
}

func installGatewayAPI(ctx context.Context, ext apiextensionsclient.Interface, gw gwclient.Interface, all []*apiextensionsv1.CustomResourceDefinition) error {
	api := ext.ApiextensionsV1().CustomResourceDefinitions()
	for _, want := range all {
		cur, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create CRD %s: %w", want.Name, err)
			}
		case err != nil:
			return fmt.Errorf("CRD %s: %w", want.Name, err)
		case upgradable(cur, want):
			next := want.DeepCopy()
			next.ResourceVersion = cur.ResourceVersion
			if _, err := api.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update CRD %s: %w", want.Name, err)
			}
		}
	}
	// The class waits for its CRD to be served.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := gw.GatewayV1().GatewayClasses().Create(ctx, GatewayClass(), metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("GatewayClass %s: %w", ingress.ClassName, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// upgradable reports whether cur, an installed CRD, is an older release
// of want's channel.
func upgradable(cur, want *apiextensionsv1.CustomResourceDefinition) bool {
	const channel = "gateway.networking.k8s.io/channel"
	if cur.Annotations[channel] != want.Annotations[channel] {
		return false
	}
	have, next := cur.Annotations[crds.BundleVersionAnnotation], want.Annotations[crds.BundleVersionAnnotation]
	return semver.IsValid(have) && semver.IsValid(next) && semver.Compare(have, next) < 0
}
