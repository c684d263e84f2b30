package main

import "fmt"

// recordedRatios are the write path's ratios to raw etcd puts (gets for
// the read) in the run docs/benchmarks.md last records ("The write
// path"); every run prints its own next to them, so that a change that
// loses them shows. Update them together with that table.
var recordedRatios = map[string]float64{
	"create":  0.32,
	"update":  0.19,
	"apply":   0.14,
	"pod":     0.07,
	"get/get": 0.44,
}

// regressed is how far below its recorded value a ratio may fall before
// it is flagged: runs on one machine move by about ten per cent.
const regressed = 0.85

// ratioTargets are the goals for the write path.
var ratioTargets = map[string]float64{"create": 0.70, "pod": 0.60}

// printWriteRatios prints each write phase's throughput as a fraction of
// raw etcd puts at the same concurrency, and the server's CPU per
// operation next to etcd's per put, with the recorded ratios.
func printWriteRatios(rawPut, rawGet, create, get, update, apply, pod result) {
	rows := []struct {
		key, label string
		r, base    result
	}{
		{"create", "API create ConfigMap / raw etcd put", create, rawPut},
		{"update", "API update ConfigMap / raw etcd put", update, rawPut},
		{"apply", "API apply ConfigMap / raw etcd put", apply, rawPut},
		{"pod", "API create Pod / raw etcd put", pod, rawPut},
		{"get/get", "API get ConfigMap / raw etcd get", get, rawGet},
	}
	fmt.Printf("%-38s %6s %9s %7s   %s\n", "ratio", "now", "recorded", "target", "server CPU per op (raw etcd's)")
	for _, row := range rows {
		now := row.r.throughput / row.base.throughput
		rec := recordedRatios[row.key]
		target := "-"
		if t, ok := ratioTargets[row.key]; ok {
			target = fmt.Sprintf("%.2f", t)
		}
		flag := ""
		if rec > 0 && now < rec*regressed {
			flag = fmt.Sprintf("   REGRESSED: below %.0f%% of the recorded ratio", regressed*100)
		}
		cpu := "-"
		if row.r.serverCPU > 0 && row.base.serverCPU > 0 {
			cpu = fmt.Sprintf("%.0f µs (%.0f µs)", row.r.cpuPerOp(), row.base.cpuPerOp())
		}
		fmt.Printf("%-38s %6.2f %9.2f %7s   %s%s\n", row.label, now, rec, target, cpu, flag)
	}
	fmt.Printf("%-38s %6.2f   (server-side apply vs plain update, same objects)\n", "API apply / API update", apply.throughput/update.throughput)
}
