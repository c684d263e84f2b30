package core

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// resourcequotaTable prints resourcequotas as upstream's `kubectl get` does.
// Upstream moved AGE after REQUEST and LIMIT in 1.33 (kubernetes#129419);
// this follows the current order.
var resourcequotaTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(resourcequotaRow),
}

// resourcequotaFields lists the fields a field selector over resourcequotas may name.
var resourcequotaFields func(runtime.Object) fields.Set

// resourcequotaRow prints "used/hard" for every enforced resource, in name
// order; limits.* resources go to LIMIT and everything else to REQUEST.
func resourcequotaRow(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)

	var request, limit strings.Builder
	for _, name := range names {
		w := &request
		if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
			w = &limit
		}
		used := q.Status.Used[corev1.ResourceName(name)]
		hard := q.Status.Hard[corev1.ResourceName(name)]
		fmt.Fprintf(w, "%s: %s/%s, ", name, used.String(), hard.String())
	}
	return []any{
		strings.TrimSuffix(request.String(), ", "),
		strings.TrimSuffix(limit.String(), ", "),
		printers.TranslateTimestampSince(q.CreationTimestamp, now),
	}
}
