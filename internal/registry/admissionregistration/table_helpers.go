package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers"
)

// webhookColumns are the columns of both webhook configuration kinds.
func webhookColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		printers.AgeColumn(),
	}
}

// policyColumns are the columns of both policy kinds; count names and
// describes what the policy holds.
func policyColumns(count, countDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: count, Type: "integer", Description: countDoc},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		printers.AgeColumn(),
	}
}

// bindingColumns are the columns of both binding kinds.
func bindingColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		printers.AgeColumn(),
	}
}

func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// paramRefCell names a binding's parameter. A reference without a
// namespace may be to a cluster-scoped object or to one in the namespace
// of each request, which the binding alone cannot tell, hence "*".
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case len(pr.Name) > 0 && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case len(pr.Name) > 0:
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}
