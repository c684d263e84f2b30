package apps

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// controllerrevisionTable prints controllerrevisions as upstream's `kubectl get` does.
var controllerrevisionTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		// Upstream types REVISION as a string yet fills it with an integer.
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		printers.AgeColumn(),
	},
	Row: registry.TypedRow(func(cr *appsv1.ControllerRevision, now time.Time) []any {
		controller := "<none>"
		if ref := metav1.GetControllerOf(cr); ref != nil {
			// Upstream fails the whole table on an unparsable apiVersion;
			// a row cannot fail here, so the kind alone qualifies the name.
			gv, _ := schema.ParseGroupVersion(ref.APIVersion)
			gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
			controller = ref.Name
			if !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
		return []any{controller, cr.Revision, printers.TranslateTimestampSince(cr.CreationTimestamp, now)}
	}),
}

// controllerrevisionFields lists the fields a field selector over controllerrevisions may name.
var controllerrevisionFields func(runtime.Object) fields.Set
