package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/ingress"
)

// runIngress runs the node's ingress unless it is disabled, and keeps
// the Node's ingress label saying whether it serves: the ingress
// publisher makes the labelled nodes the orca-ingress Service's
// endpoints. Disabled, it removes the label and returns.
func runIngress(ctx context.Context, o Options, node kubernetes.Interface, reg prometheus.Registerer, log *slog.Logger) error {
	if o.DisableIngress {
		labelIngress(ctx, node, o.NodeName, false, log)
		return nil
	}
	cfg := o.IngressConfig
	if cfg == nil {
		cfg = o.Config
	}
	client, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	gw, err := gwclient.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return fmt.Errorf("gateway API client: %w", err)
	}
	return ingress.RunNode(ctx, ingress.NodeOptions{
		Client: client, Gateway: gw, Metrics: reg, Log: log,
		Serving: func() { labelIngress(ctx, node, o.NodeName, true, log) },
	})
}

// labelIngress sets or removes the node's ingress label, retrying until
// the Node exists and the patch lands (or ctx ends).
func labelIngress(ctx context.Context, client kubernetes.Interface, name string, serving bool, log *slog.Logger) {
	var value any // null removes the label
	if serving {
		value = "true"
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{ingress.NodeLabel: value}}})
	backoff := wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Cap: 10 * time.Second, Steps: 1 << 30}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if _, has := n.Labels[ingress.NodeLabel]; has == serving && (!serving || n.Labels[ingress.NodeLabel] == "true") {
				return true, nil
			}
			_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
		if err != nil {
			log.Debug("label the node for the ingress", "serving", serving, "err", err)
			return false, nil
		}
		return true, nil
	})
}
