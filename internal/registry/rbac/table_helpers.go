package rbac

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers"
)

// bindingColumns are the columns of both binding kinds; only the
// descriptions differ, as upstream's do.
func bindingColumns(kind, roleRefDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Role", Type: "string", Description: roleRefDoc},
		printers.AgeColumn(),
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

func bindingRow(meta metav1.ObjectMeta, roleRef rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) []any {
	users, groups, sas := []string{}, []string{}, []string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, fmt.Sprintf("%s/%s", s.Namespace, s.Name))
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []any{
		fmt.Sprintf("%s/%s", roleRef.Kind, roleRef.Name),
		printers.TranslateTimestampSince(meta.CreationTimestamp, now),
		strings.Join(users, ", "),
		strings.Join(groups, ", "),
		strings.Join(sas, ", "),
	}
}
