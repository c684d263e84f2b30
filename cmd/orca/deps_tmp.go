package main

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "go.etcd.io/etcd/client/v3"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/component-base/cli"
	_ "k8s.io/kube-openapi/pkg/builder"
	_ "k8s.io/kube-openapi/pkg/builder3"
	_ "k8s.io/kube-openapi/pkg/common"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "k8s.io/api/apidiscovery/v2"
)

func main() {}
