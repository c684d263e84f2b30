package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// serviceaccountTable prints serviceaccounts as upstream's `kubectl get` does.
var serviceaccountTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		// Upstream types SECRETS as a string yet fills it with an integer.
		{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(sa *corev1.ServiceAccount, now time.Time) []any {
		return []any{int64(len(sa.Secrets)), printers.TranslateTimestampSince(sa.CreationTimestamp, now)}
	}),
}

// serviceaccountFields lists the fields a field selector over serviceaccounts may name.
var serviceaccountFields func(runtime.Object) fields.Set
