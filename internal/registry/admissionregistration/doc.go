// Package admissionregistration defines admissionregistration.k8s.io/v1,
// the configuration of dynamic admission: webhook configurations,
// validating and mutating admission policies and their bindings, with
// upstream's names, defaults, validation and table columns.
//
// Validation is upstream's (k8s.io/kubernetes pkg/apis/admissionregistration
// /validation) ported from the internal types to the v1 ones, CEL compile
// checks included: an object the upstream API server would refuse is
// refused here with the same field paths and messages. Updates are checked
// as upstream checks them, which lets an object keep what was already wrong
// with it (unknown AdmissionReview versions, side effects, duplicate
// webhook names, bad selector values, expressions a newer CEL environment
// no longer compiles) so that it can still be changed in other ways.
package admissionregistration
