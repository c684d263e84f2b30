package server

import (
	"context"
	"time"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/controller/defaultservicecidr"
)

// startDefaultServiceCIDR creates the default ServiceCIDR for cidr (the
// allocator's range) and returns once it exists and is Ready, as upstream
// holds its API server's start until then; the keeper then runs until ctx
// ends. It acts through the API as the server's own administrator.
func startDefaultServiceCIDR(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int, cidr string, run func(func() error)) error {
	client, err := adminClient(opts, tlsDir, ca, port, "orca-service-cidr", 5, 10)
	if err != nil {
		return err
	}
	k := defaultservicecidr.New(ctx, client, []string{cidr}, opts.Log)
	if err := retryFor(ctx, 100*time.Millisecond, "default ServiceCIDR", func() error { return k.Sync(ctx) }); err != nil {
		return err
	}
	run(func() error {
		k.Run(ctx)
		return nil
	})
	return nil
}
