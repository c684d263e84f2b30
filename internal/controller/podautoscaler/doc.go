// Package podautoscaler is upstream's horizontal pod autoscaler
// controller ("horizontalpodautoscaling"). Every sync period (15 s) each
// HPA reads its target's /scale, computes a replica count from every
// metric (resource utilization or average value from metrics.k8s.io,
// container resources, pods and object metrics from custom.metrics.k8s.io,
// external metrics from external.metrics.k8s.io), takes the largest,
// stabilizes and rate-limits it by the HPA's behavior, writes it through
// /scale, and reports the outcome in status and events.
//
// The decisions are pure functions over plain data: calculator.go turns
// metrics and pods into a replica count, behavior.go applies
// stabilization windows and scaling policies to a recommendation history,
// conditions.go builds the conditions. controller.go does the I/O.
package podautoscaler
