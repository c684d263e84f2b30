package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Print writes e as `orca explain` shows it: the verdict, how many nodes
// were looked at, the counts by reason in the FailedScheduling message's
// words, the rejected nodes (closest first) and the top scored nodes with
// each plugin's weighted score and, in parentheses, its raw score.
// top bounds the scored rows; 0 prints them all.
func Print(w io.Writer, e *Explanation, top int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Pod:\t%s\n", e.Pod)
	switch e.Result {
	case Scheduled:
		fmt.Fprintf(tw, "Result:\tScheduled to %s\n", e.Node)
	case Unschedulable:
		fmt.Fprintf(tw, "Result:\tPending\n")
	default:
		fmt.Fprintf(tw, "Result:\tPending (scheduler error)\n")
	}
	if e.Message != "" {
		fmt.Fprintf(tw, "Message:\t%s\n", e.Message)
	}
	fmt.Fprintf(tw, "Attempt:\t%s\n", e.Time.Format(time.RFC3339))
	nodes := fmt.Sprintf("%d in the cluster, %d evaluated, %d feasible", e.Nodes, e.Evaluated, e.Feasible)
	if rest := e.Nodes - e.Evaluated; rest > 0 {
		nodes += fmt.Sprintf("; %d not evaluated (the search stopped once enough feasible nodes were found)", rest)
	}
	fmt.Fprintf(tw, "Nodes:\t%s\n", nodes)
	if e.PreFilter != nil {
		fmt.Fprintf(tw, "Rejected before filtering:\t%s by %s, on every node\n", e.PreFilter.Reason, e.PreFilter.Plugin)
	}
	if len(e.Reasons) > 0 {
		fmt.Fprintf(tw, "Reasons:\t%s\n", e.ReasonsText())
	}
	if len(e.Closest) > 0 {
		fmt.Fprintf(tw, "Closest:\t%s\n", strings.Join(e.Closest, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Rejected) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "REJECTED NODE\tPLUGIN\tREASON")
		for _, v := range e.Rejected {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Node, v.Plugin, v.Reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if e.RejectedOmitted > 0 {
			fmt.Fprintf(w, "(%d more rejected nodes not listed; ask for %s=full for every node)\n", e.RejectedOmitted, RequestAnnotation)
		}
	}
	if len(e.Scored) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, "RANK\tNODE")
		for _, p := range e.ScorePlugins {
			fmt.Fprintf(tw, "\t%s×%d", p.Name, p.Weight)
		}
		fmt.Fprintln(tw, "\tTOTAL")
		rows := e.Scored
		if top > 0 && len(rows) > top {
			rows = rows[:top]
		}
		for _, n := range rows {
			fmt.Fprintf(tw, "%d\t%s", n.Rank, n.Node)
			for j := range e.ScorePlugins {
				fmt.Fprintf(tw, "\t%s (%s)", score(n.Weighted, j), score(n.Raw, j))
			}
			fmt.Fprintf(tw, "\t%d\n", n.Total)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if more := len(e.Scored) - len(rows) + e.ScoredOmitted; more > 0 {
			fmt.Fprintf(w, "(%d more scored nodes not shown)\n", more)
		}
		fmt.Fprintln(w, "Scores are normalised and weighted; the plugin's raw score is in parentheses.")
	}
	return nil
}

func score(l []int64, j int) string {
	if j < len(l) {
		return strconv.FormatInt(l[j], 10)
	}
	return "-"
}
