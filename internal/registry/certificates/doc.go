// Package certificates defines the certificates.k8s.io/v1 resources:
// CertificateSigningRequests with their /status and /approval
// subresources, ClusterTrustBundles and PodCertificateRequests: names,
// defaults, validation and table columns.
package certificates
