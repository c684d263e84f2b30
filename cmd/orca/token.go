package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
)

// newTokenCommand manages bootstrap tokens, as kubeadm's `token`: each
// is a Secret in kube-system, so the commands talk to the API server
// with an administrator's kubeconfig. Tokens are printed in the join
// form, with the pin of the cluster CA, ready for `orca agent --token`.
func newTokenCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and delete the bootstrap tokens machines join the cluster with",
	}
	cmd.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "", "an administrator's kubeconfig (KUBECONFIG when empty, else the data directory's admin kubeconfig)")

	var spec bootstraptoken.Spec
	create := &cobra.Command{
		Use:   "create [TOKEN]",
		Short: "Create a bootstrap token and print it as a join token",
		Long:  "Create a bootstrap token (a random one unless TOKEN, [a-z0-9]{6}.[a-z0-9]{16}, is given) and print it with the hash of the cluster CA: K10<hash>::ID.SECRET.",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, client, err := tokenClient(kubeconfig)
			if err != nil {
				return err
			}
			ca, err := clusterCACert(cfg)
			if err != nil {
				return err
			}
			s := spec
			if len(args) == 1 {
				s.Token = args[0]
			}
			secret, token, err := s.Secret(time.Now())
			if err != nil {
				return err
			}
			if _, err := client.CoreV1().Secrets(metav1.NamespaceSystem).Create(cmd.Context(), secret, metav1.CreateOptions{}); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("a token with ID %q already exists", secret.Data[bootstrapapi.BootstrapTokenIDKey])
				}
				return fmt.Errorf("create token: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), bootstraptoken.JoinToken(ca, token))
			return nil
		},
	}
	create.Flags().DurationVar(&spec.TTL, "ttl", 24*time.Hour, "how long the token is valid (0: forever)")
	create.Flags().StringVar(&spec.Description, "description", "", "a human-friendly description of the token's use")
	create.Flags().StringSliceVar(&spec.Usages, "usages", []string{"signing", "authentication"}, "ways the token may be used: authentication, signing")
	create.Flags().StringSliceVar(&spec.Groups, "groups", []string{bootstraptoken.NodeGroup}, "extra groups the token authenticates as (each system:bootstrappers:...)")

	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the bootstrap tokens",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, client, err := tokenClient(kubeconfig)
			if err != nil {
				return err
			}
			opts := metav1.ListOptions{}
			bootstraptoken.OnlyTokens(&opts)
			secrets, err := client.CoreV1().Secrets(metav1.NamespaceSystem).List(cmd.Context(), opts)
			if err != nil {
				return fmt.Errorf("list tokens: %w", err)
			}
			return printTokens(cmd.OutOrStdout(), secrets.Items, time.Now())
		},
	}

	del := &cobra.Command{
		Use:   "delete ID|TOKEN...",
		Short: "Delete bootstrap tokens, so that they no longer authenticate",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, client, err := tokenClient(kubeconfig)
			if err != nil {
				return err
			}
			return deleteTokens(cmd.Context(), client, cmd.OutOrStdout(), args)
		},
	}
	cmd.AddCommand(create, list, del)
	return cmd
}

func tokenClient(kubeconfig string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := adminConfig(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	return cfg, client, err
}

// clusterCACert is the CA the kubeconfig trusts, whose hash goes into
// join tokens.
func clusterCACert(cfg *rest.Config) (*x509.Certificate, error) {
	data := cfg.TLSClientConfig.CAData
	if len(data) == 0 && cfg.TLSClientConfig.CAFile != "" {
		var err error
		if data, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			return nil, fmt.Errorf("cluster CA: %w", err)
		}
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig names no cluster CA, which join tokens carry the hash of: %w", err)
	}
	return certs[0], nil
}

// printTokens writes kubeadm's `token list` table.
func printTokens(w io.Writer, secrets []v1.Secret, now time.Time) error {
	type row struct{ token, ttl, expires, usages, description, groups string }
	var rows []row
	for i := range secrets {
		in, ok := bootstraptoken.InfoOf(&secrets[i])
		if !ok {
			continue
		}
		r := row{
			token: in.ID + "." + string(secrets[i].Data[bootstrapapi.BootstrapTokenSecretKey]),
			ttl:   "<forever>", expires: "<never>",
			usages: strings.Join(in.Usages, ","), description: in.Description, groups: strings.Join(in.Groups, ","),
		}
		if in.Expires != nil {
			if left := in.Expires.Sub(now); left > 0 {
				r.ttl = duration.ShortHumanDuration(left)
			} else {
				r.ttl = "<invalid>"
			}
			r.expires = in.Expires.UTC().Format(time.RFC3339)
		}
		if r.description == "" {
			r.description = "<none>"
		}
		if r.groups == "" {
			r.groups = "<none>"
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].token < rows[j].token })
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.token, r.ttl, r.expires, r.usages, r.description, r.groups)
	}
	return tw.Flush()
}

// deleteTokens deletes tokens named by ID, full token or join token.
func deleteTokens(ctx context.Context, client kubernetes.Interface, w io.Writer, args []string) error {
	for _, a := range args {
		id := a
		if _, tok, err := bootstraptoken.ParseJoinToken(a); err == nil {
			a = tok
		}
		if tid, _, err := bootstraptoken.Parse(a); err == nil {
			id = tid
		}
		err := client.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, bootstraptoken.SecretName(id), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("bootstrap token %q not found", id)
		}
		if err != nil {
			return fmt.Errorf("delete token %q: %w", id, err)
		}
		fmt.Fprintf(w, "bootstrap token %q deleted\n", id)
	}
	return nil
}
