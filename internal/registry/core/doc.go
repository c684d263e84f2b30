// Package core defines the core (legacy, group "") v1 resources: names, defaults, validation
// and table columns.
package core
