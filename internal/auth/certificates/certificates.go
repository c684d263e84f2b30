// Package certificates holds the certificates.k8s.io rules that the API
// server, admission, the controllers and the kubelet share: signer names
// and who may act for them, parsing of requests, and the checks the
// built-in signers make before they sign.
package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// LegacyUnknownSignerName is the signer of requests made through the
// removed v1beta1 API without one; the v1 API refuses it for new requests.
const LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// ParseCSR decodes the PEM "CERTIFICATE REQUEST" block of a request.
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// IsKubernetesSignerName reports whether a signer name is reserved to the
// Kubernetes project (kubernetes.io and its subdomains).
func IsKubernetesSignerName(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// ValidateSignerName checks the form DOMAIN/PATH of a signer name, as
// upstream: a domain of at least two DNS labels, a path of DNS subdomains
// separated by dots, and room for <fqdn>/<namespace>.<name>.
func ValidateSignerName(fldPath *field.Path, signerName string) field.ErrorList {
	var el field.ErrorList
	if signerName == "" {
		return append(el, field.Required(fldPath, ""))
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return append(el, field.Invalid(fldPath, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	maxDomain := validation.DNS1123SubdomainMaxLength
	if len(segments[0]) > maxDomain {
		el = append(el, field.TooLong(fldPath, "", maxDomain))
	}
	labels := strings.Split(segments[0], ".")
	for _, l := range labels {
		if errs := validation.IsDNS1123Label(l); len(errs) > 0 {
			for _, e := range errs {
				el = append(el, field.Invalid(fldPath, segments[0], fmt.Sprintf("validating label %q: %s", l, e)))
			}
			// Further labels would only repeat the complaint.
			break
		}
	}
	if len(labels) < 2 {
		el = append(el, field.Invalid(fldPath, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(segments[1], ".") {
		if errs := validation.IsDNS1123Subdomain(l); len(errs) > 0 {
			for _, e := range errs {
				el = append(el, field.Invalid(fldPath, segments[1], fmt.Sprintf("validating label %q: %s", l, e)))
			}
			break
		}
	}
	maxPath := validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1
	if maxName := maxDomain + maxPath + 1; len(signerName) > maxName {
		el = append(el, field.TooLong(fldPath, "", maxName))
	}
	return el
}

// IsAuthorizedForSignerName asks whether u may do verb (approve, sign,
// attest) for a signer: on signers/NAME in certificates.k8s.io, or on
// signers/DOMAIN/* which grants every signer of the domain, as upstream.
func IsAuthorizedForSignerName(ctx context.Context, authz authorizer.UnconditionalAuthorizer, u user.Info, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := authz.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: verb, Name: name, APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", ResourceRequest: true,
		})
		if err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}

// ValidateUserAnnotations checks annotations a pod author passes to a
// signer: the rules of object annotations, and every key domain-prefixed.
func ValidateUserAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	errs := apivalidation.ValidateAnnotations(annotations, fldPath)
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if !strings.Contains(k, "/") {
			errs = append(errs, field.Invalid(fldPath, k, `must be a domain-prefixed key (such as "acme.io/foo")`))
		}
	}
	return errs
}

// ClusterTrustBundleNameFor returns the rule for names of bundles of a
// signer: SIGNER with "/" as ":", then ":" and a DNS subdomain; a bundle
// without signer may not look like one.
func ClusterTrustBundleNameFor(signerName string) func(name string, prefix bool) []string {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		required := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, required) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, required)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, required), prefix)
	}
}

// Bounds of a pod certificate's lifetime: a signer may issue for one hour
// at least, and at most 91 days (a day for Kubernetes' own signers).
const (
	MinMaxExpirationSeconds           = 60 * 60
	MaxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	KubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
)

// ValidateMaxExpirationSeconds bounds a requested lifetime: one hour to
// 91 days, or to a day for Kubernetes' own signers.
func ValidateMaxExpirationSeconds(fldPath *field.Path, signerName string, v int32) field.ErrorList {
	hi := int32(MaxMaxExpirationSeconds)
	if IsKubernetesSignerName(signerName) {
		hi = KubernetesMaxMaxExpirationSeconds
	}
	if v < MinMaxExpirationSeconds || v > hi {
		return field.ErrorList{field.Invalid(fldPath, v, fmt.Sprintf("must be in the range [%d, %d]", MinMaxExpirationSeconds, hi))}
	}
	return nil
}
