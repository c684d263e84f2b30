// Command etcd is etcd's server, as upstream's etcd binary is (its main
// package calls etcdmain.Main), built from the go.etcd.io/etcd/server/v3
// this module already uses, for the suite's etcd image: the aggregator spec
// runs it next to the sample API server (test/conformance/images/build.sh).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
