// Package eviction holds the decisions of the pods/eviction subresource,
// as upstream's pod eviction REST storage makes them, over plain objects:
// whether a pod may go without consulting its disruption budgets, which
// budgets cover it, whether an unhealthy pod may go regardless, and what
// taking one disruption from a budget writes to its status or why the
// budget refuses (a 429 with upstream's message and DisruptionBudget
// cause). The API server reads and writes; this package only decides.
package eviction
