package server

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controller/defaultservicecidr"
)

// startDefaultServiceCIDR creates the default ServiceCIDR for cidr (the
// allocator's range) and returns once it exists and is Ready, as upstream
// holds its API server's start until then; the keeper then runs until ctx
// ends. It acts through the API as the server's own administrator.
func startDefaultServiceCIDR(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, cidr string, run func(func() error)) error {
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "admin", "system:admin", []string{"system:masters"}, "orca-service-cidr", 5, 10)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	k := defaultservicecidr.New(ctx, client, []string{cidr}, opts.Log)
	for deadline := time.Now().Add(time.Minute); ; {
		err := k.Sync(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("default ServiceCIDR: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	run(func() error {
		k.Run(ctx)
		return nil
	})
	return nil
}
