package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orca-project/orca/internal/scheduler/explain"
)

// newExplainCommand prints the scheduler's account of a pod's placement.
// The explanation lives in the pod's scheduler.orca.io/explanation
// annotation, so anyone who may get the pod may read it; for a Pending
// pod the command asks for one (which needs patch on the pod) and waits.
func newExplainCommand() *cobra.Command {
	var (
		kubeconfig, namespace string
		full                  bool
		top                   int
		wait                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "explain pod/NAME | pod NAME",
		Short: "Show why the scheduler placed a pod where it did, or why it is Pending",
		Long: "Show the scheduler's explanation of a pod's placement: the chosen node (or Pending), the counts by reason " +
			"(the FailedScheduling message's words), each rejected node with the plugin that rejected it and why, and the top " +
			"scored nodes with each plugin's score. The scheduler writes the explanation into the pod's " + explain.Annotation +
			" annotation when the pod carries " + explain.RequestAnnotation + ": \"true\" (or \"full\"); for a Pending pod without " +
			"one, this command sets the request and waits for the scheduler's next attempt; for a bound pod without one, it reads " +
			"the scheduler's recent explanations (the pods/NAME/explanation subresource).",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := podArg(args)
			if err != nil {
				return err
			}
			cfg, ns, err := explainConfig(kubeconfig, namespace)
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			e, err := explain.Fetch(cmd.Context(), client.CoreV1(), ns, name, full, wait)
			if err != nil {
				return err
			}
			return explain.Print(cmd.OutOrStdout(), e, top)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to use (KUBECONFIG when empty, else the data directory's admin kubeconfig)")
	f.StringVarP(&namespace, "namespace", "n", "", "the pod's namespace (the kubeconfig context's, else default)")
	f.BoolVar(&full, "full", false, "for a Pending pod, ask for every node rather than the first 100 of each list")
	f.IntVar(&top, "top", 10, "scored nodes to show (0: all the explanation holds)")
	f.DurationVar(&wait, "timeout", 30*time.Second, "how long to wait for the scheduler to explain a Pending pod")
	return cmd
}

// podArg accepts pod/NAME (also pods/ and po/) or pod NAME.
func podArg(args []string) (string, error) {
	kind, name := "", ""
	switch {
	case len(args) == 2:
		kind, name = args[0], args[1]
	case strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
	default:
		return "", fmt.Errorf("name the pod as pod/NAME or pod NAME")
	}
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
	default:
		return "", fmt.Errorf("only pods are scheduled: got %q, want pod/NAME", kind)
	}
	if name == "" {
		return "", fmt.Errorf("name the pod as pod/NAME or pod NAME")
	}
	return name, nil
}

// explainConfig is adminConfig's kubeconfig with its context's namespace.
func explainConfig(kubeconfig, namespace string) (cfg *rest.Config, ns string, err error) {
	cfg, err = adminConfig(kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig: %w", err)
	}
	if namespace != "" {
		return cfg, namespace, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	ns, _, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	return cfg, ns, nil
}
