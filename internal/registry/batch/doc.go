// Package batch defines the batch/v1 resources: names, defaults, validation
// and table columns.
package batch
