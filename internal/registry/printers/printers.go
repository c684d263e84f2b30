// Package printers holds the pieces of upstream Kubernetes' server-side
// printing (k8s.io/kubernetes pkg/printers/internalversion) that more than one
// API group needs: relative ages, container summaries, the shared column
// definitions and the default "Created At" table.
//
// Upstream always generates tables with GenerateOptions{Wide: true} on the
// server and lets the client drop priority-1 columns, so every row built with
// these helpers carries all of its cells.
package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var objectMetaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// AgeColumn is the AGE column upstream gives almost every kind. Upstream types
// it as a string because the cell is a relative duration, not a timestamp.
func AgeColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDocs["creationTimestamp"]}
}

// ContainersColumn and ImagesColumn are the wide columns upstream adds to
// every kind with a pod template.
func ContainersColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
}

// ImagesColumn: see ContainersColumn.
func ImagesColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
}

// CreatedAtColumns are the columns of the apiserver's default table
// convertor (k8s.io/apiserver/pkg/registry/rest.defaultTableConvertor), which
// upstream uses for kinds with no printer of their own (roles, limit ranges).
// The server's NAME column is the other half of that table.
func CreatedAtColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Created At", Type: "date", Description: objectMetaDocs["creationTimestamp"]},
	}
}

// CreatedAtRow is the row of the default table convertor: an absolute RFC
// 3339 timestamp in UTC, which is why that column is typed "date".
func CreatedAtRow(obj metav1.Object, _ time.Time) []any {
	return []any{obj.GetCreationTimestamp().UTC().Format(time.RFC3339)}
}

// TranslateTimestampSince is upstream's translateTimestampSince with the
// clock passed in, so a table is consistent with the instant it was built.
func TranslateTimestampSince(ts metav1.Time, now time.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// TranslateMicroTimestampSince is TranslateTimestampSince for MicroTime.
func TranslateMicroTimestampSince(ts metav1.MicroTime, now time.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// LayoutContainerCells joins container names and images with commas, as
// upstream's layoutContainerCells does for the CONTAINERS and IMAGES cells.
func LayoutContainerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	i := make([]string, len(containers))
	for k, c := range containers {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// BoolPtr renders an optional bool the way upstream's printBoolPtr does:
// capitalised, and "<unset>" when absent.
func BoolPtr(v *bool) string {
	if v == nil {
		return "<unset>"
	}
	if *v {
		return "True"
	}
	return "False"
}

// ListWithMore joins the first entries of a truncated list and says how many
// were left out; an empty list prints as "<unset>" (upstream's
// listWithMoreString).
func ListWithMore(list []string, more bool, count, max int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		ret = "<unset>"
	}
	return ret
}

// Replicas reads an optional replica count. Upstream prints stored objects,
// where defaulting has already turned an absent count into 1.
func Replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
