// Command memhog is the end-to-end tests' memory holder: `memhog MIB`
// allocates MIB mebibytes, writes every page so that each is resident,
// and then sleeps until killed, holding them.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// held keeps the memory reachable for as long as the process lives.
var held []byte

func main() {
	mib := 64
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "memhog: bad size %q\n", os.Args[1])
			os.Exit(2)
		}
		mib = n
	}
	held = make([]byte, mib<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	fmt.Printf("holding %d MiB\n", mib)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fmt.Println(len(held))
}
