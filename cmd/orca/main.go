// Command orca is the Orca cluster in one binary: `orca server` runs a
// control plane, `orca kubectl` is kubectl, and the other subcommands are
// tools around them.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	// Invoked through a link named kubectl, behave as kubectl itself.
	if filepath.Base(os.Args[0]) == "kubectl" {
		os.Exit(runKubectl(os.Args[1:]))
	}
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
