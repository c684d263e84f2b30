// Package apps defines the apps/v1 workload resources: names, defaults, validation
// and table columns.
package apps
