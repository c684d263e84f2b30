package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// mutatingwebhookconfigurationTable prints mutatingwebhookconfigurations as upstream's `kubectl get` does.
var mutatingwebhookconfigurationTable = &registry.Table{
	Columns: webhookColumns(),
	Row: registry.TypedRow(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
		return []any{int64(len(c.Webhooks)), printers.TranslateTimestampSince(c.CreationTimestamp, now)}
	}),
}
