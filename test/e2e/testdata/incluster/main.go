// Command incluster is what an operator does first: build client-go's
// in-cluster configuration from the pod's service-account token and the
// KUBERNETES_SERVICE_HOST/PORT variables, and list pods. With -host it
// lists again through that URL (https://kubernetes.default.svc), which
// needs cluster DNS and a serving certificate naming the service.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

func main() {
	host := flag.String("host", "", "list again through this URL")
	flag.Parse()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		fail("in-cluster configuration", err)
	}
	ns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		fail("namespace", err)
	}
	list(cfg, strings.TrimSpace(string(ns)))
	if *host != "" {
		cfg.Host = *host
		list(cfg, strings.TrimSpace(string(ns)))
	}
}

func list(cfg *rest.Config, ns string) {
	cfg.Timeout = 10 * time.Second
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		fail("client", err)
	}
	pods, err := c.Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		fail("list pods through "+cfg.Host, err)
	}
	fmt.Printf("%s: %d pods in %s\n", cfg.Host, len(pods.Items), ns)
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
	os.Exit(1)
}
