// Package resource defines resource.k8s.io/v1, dynamic resource
// allocation's API (device classes, resource claims and their templates,
// resource slices, device taint rules): names, defaults, validation and
// table columns. Nothing in Orca allocates devices; the API is served so
// that drivers and clients can use it.
//
// Validation is upstream's in two halves, as upstream runs it: the rules
// k8s.io/api generates from the API's own tags (required fields, list
// sizes, formats, enums, uniqueness), called as they are, and the
// handwritten rules those tags do not cover, written here. CEL selector
// expressions are checked for length but not compiled.
package resource
