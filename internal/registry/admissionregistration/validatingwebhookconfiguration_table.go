package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// validatingwebhookconfigurationTable prints validatingwebhookconfigurations as upstream's `kubectl get` does.
var validatingwebhookconfigurationTable = &registry.Table{
	Columns: webhookColumns(),
	Row: registry.TypedRow(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
		return []any{int64(len(c.Webhooks)), printers.TranslateTimestampSince(c.CreationTimestamp, now)}
	}),
}
