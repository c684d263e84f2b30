// Package flowcontrol defines flowcontrol.apiserver.k8s.io/v1, the
// configuration of API Priority and Fairness: FlowSchemas and
// PriorityLevelConfigurations with upstream's names, defaults, validation
// and table columns, and upstream's bootstrap objects, which the API
// server creates at start and keeps.
package flowcontrol
