// Command orca-pause is the process that holds a pod sandbox's namespaces
// open. It does nothing but wait: it exits 0 on SIGINT or SIGTERM and, when
// it is PID 1 of the pod's PID namespace, reaps the zombies that orphaned
// processes leave behind, as upstream's pause.c does. It uses the standard
// library only so that the binary stays small.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is what -v prints; it changes only when the behaviour does.
const version = "1.0"

func main() {
	verbose := flag.Bool("v", false, "print the version and a line per signal")
	flag.Parse()
	if *verbose {
		fmt.Fprintf(os.Stderr, "orca-pause %s\n", version)
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	isInit := os.Getpid() == 1
	if !isInit && *verbose {
		fmt.Fprintln(os.Stderr, "orca-pause: not PID 1, zombies will not be reaped")
	}
	for sig := range sigs {
		switch sig {
		case syscall.SIGCHLD:
			if isInit {
				reap()
			}
		default:
			if *verbose {
				fmt.Fprintf(os.Stderr, "orca-pause: shutting down, got signal %v\n", sig)
			}
			os.Exit(0)
		}
	}
}

// reap collects every child that has exited. One SIGCHLD may stand for
// several exits, so it loops until no exited child is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
