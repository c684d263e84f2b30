// Command registry serves docker archives as a read-only image registry:
//
//	registry --listen 172.30.0.1:5000 IMAGE.tar...
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/orca-project/orca/test/conformance/registry"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5000", "address to serve on")
	flag.Parse()
	r := registry.New()
	for _, f := range flag.Args() {
		refs, err := r.AddArchive(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "registry:", err)
			os.Exit(1)
		}
		for _, ref := range refs {
			fmt.Println("serving", ref)
		}
	}
	log.Fatal(http.ListenAndServe(*listen, r))
}
