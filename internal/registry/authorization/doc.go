// Package authorization defines authorization.k8s.io/v1 (the access
// reviews clients ask of the server): names and validation. The verdict
// is the API server's, which knows who asks.
package authorization
