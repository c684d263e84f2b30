// Package events defines events.k8s.io/v1 events: names, defaults, validation
// and table columns.
package events
