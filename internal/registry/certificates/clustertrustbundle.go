package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/auth/certificates"
	"github.com/orca-project/orca/internal/registry"
)

// maxTrustBundleSize is upstream's limit on spec.trustBundle.
const maxTrustBundleSize = 1 << 20

// Clustertrustbundles is the clustertrustbundles resource: CA
// certificates any pod may mount, optionally attested by a signer.
var Clustertrustbundles = &registry.Resource{
	Group: certificatesv1.GroupName, Version: "v1", Name: "clustertrustbundles",
	Singular: "clustertrustbundle", Kind: "ClusterTrustBundle",
	New:     func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
	NewList: func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
	// The name's rule depends on spec.signerName, so Validate checks it.
	ValidateName:   func(string, bool) []string { return nil },
	Validate:       registry.TypedValidate(validateClusterTrustBundle),
	ValidateUpdate: registry.TypedValidateUpdate(validateClusterTrustBundleUpdate),
	Table: &registry.Table{
		Columns: []metav1.TableColumnDefinition{
			{Name: "SignerName", Type: "string", Description: certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]},
		},
		Row: registry.TypedRow(func(b *certificatesv1.ClusterTrustBundle, _ time.Time) []any {
			if b.Spec.SignerName == "" {
				return []any{"<none>"}
			}
			return []any{b.Spec.SignerName}
		}),
	},
	Fields: registry.TypedFields(func(b *certificatesv1.ClusterTrustBundle) fields.Set {
		return fields.Set{"spec.signerName": b.Spec.SignerName}
	}),
}

func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
	return validateClusterTrustBundleWith(b, true)
}

func validateClusterTrustBundleWith(b *certificatesv1.ClusterTrustBundle, parseBundle bool) field.ErrorList {
	var errs field.ErrorList
	nameRule := certificates.ClusterTrustBundleNameFor(b.Spec.SignerName)
	if b.Name != "" {
		for _, msg := range nameRule(b.Name, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), b.Name, msg))
		}
	}
	if b.Spec.SignerName != "" {
		errs = append(errs, certificates.ValidateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parseBundle {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// validateClusterTrustBundleUpdate parses the bundle only when it
// changes, so that a stricter parser never locks an object that was
// accepted once; the signer is fixed.
func validateClusterTrustBundleUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	var errs field.ErrorList
	if b.Spec.TrustBundle != old.Spec.TrustBundle {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, old.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

// validateTrustBundle accepts only CERTIFICATE blocks without headers,
// each a CA certificate, at least one and none twice.
func validateTrustBundle(path *field.Path, in string) field.ErrorList {
	var errs field.ErrorList
	if len(in) > maxTrustBundleSize {
		return append(errs, field.TooLong(path, "", maxTrustBundleSize))
	}
	seen := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch cert, err := x509.ParseCertificate(b.Bytes); {
		case b.Type != "CERTIFICATE":
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d has bad block type: %v", i, b.Type)))
		case len(b.Headers) != 0:
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d has PEM block headers", i)))
		case err != nil:
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d does not parse as X.509", i)))
		case !cert.IsCA:
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d does not have the CA bit set", i)))
		case !cert.BasicConstraintsValid:
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d has invalid basic constraints", i)))
		default:
			if _, ok := seen[string(b.Bytes)]; !ok {
				order = append(order, string(b.Bytes))
			}
			seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
		}
	}
	// A malformed block makes complaints about missing or duplicate
	// anchors redundant.
	if len(errs) != 0 {
		return errs
	}
	if len(seen) == 0 {
		errs = append(errs, field.Invalid(path, "<value omitted>", "at least one trust anchor must be provided"))
	}
	for _, k := range order {
		if idx := seen[k]; len(idx) > 1 {
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}
