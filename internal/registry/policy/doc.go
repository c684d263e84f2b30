// Package policy defines policy/v1 (pod disruption budgets): names,
// defaults, validation, status rules and table columns.
package policy
