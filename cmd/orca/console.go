package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/orca-project/orca/internal/console"
)

// newConsoleCommand prints a sign-in link to the web console for the
// cluster's admin.
func newConsoleCommand() *cobra.Command {
	var (
		kubeconfig string
		ttl        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Print a short-lived sign-in link to the web console",
		Long: "Print a sign-in link to the web console served by orca server under /ui/, of the form " +
			"https://SERVER/ui/#token=TOKEN. The token is a TokenRequest for the " + console.AdminNamespace + "/" +
			console.AdminServiceAccount + " service account, bound to cluster-admin (both are created when missing), " +
			"and expires after --duration. It travels in the link's fragment, which browsers do not send to servers. " +
			"Any other bearer token (kubectl create token) can be pasted into the console's sign-in form instead.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl < 10*time.Minute {
				// As upstream's TokenRequest validation.
				return fmt.Errorf("--duration must be at least 10m, got %v", ttl)
			}
			cfg, err := adminConfig(kubeconfig)
			if err != nil {
				return fmt.Errorf("load kubeconfig: %w", err)
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			link, expires, err := console.LoginLink(cmd.Context(), client, cfg.Host, ttl)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), link)
			fmt.Fprintf(cmd.ErrOrStderr(), "The link signs in as %s/%s (cluster-admin) until %s.\n",
				console.AdminNamespace, console.AdminServiceAccount, expires.Local().Format(time.RFC1123))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to use (KUBECONFIG when empty, else the data directory's admin kubeconfig)")
	f.DurationVar(&ttl, "duration", time.Hour, "how long the link's token is valid")
	return cmd
}
