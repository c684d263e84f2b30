package certificates

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// csrTable prints requests as upstream's `kubectl get csr` does.
var csrTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		printers.AgeColumn(),
		{Name: "SignerName", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
		{Name: "Requestor", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
		{Name: "RequestedDuration", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	},
	Row: registry.TypedRow(csrRow),
}

func csrRow(csr *certificatesv1.CertificateSigningRequest, now time.Time) []any {
	signer := "<none>"
	if csr.Spec.SignerName != "" {
		signer = csr.Spec.SignerName
	}
	requested := "<none>"
	if e := csr.Spec.ExpirationSeconds; e != nil {
		requested = duration.HumanDuration(time.Duration(*e) * time.Second)
	}
	return []any{printers.TranslateTimestampSince(csr.CreationTimestamp, now), signer, csr.Spec.Username, requested, csrCondition(csr)}
}

// csrCondition is the CONDITION column: Denied outranks Approved, which
// outranks Pending; Failed and Issued are added after a comma.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}
