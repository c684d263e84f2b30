// Package builtin lists the resources Orca serves, in discovery order.
package builtin

import (
	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/admissionregistration"
	"github.com/orca-project/orca/internal/registry/apiextensions"
	"github.com/orca-project/orca/internal/registry/apiregistration"
	"github.com/orca-project/orca/internal/registry/apps"
	"github.com/orca-project/orca/internal/registry/authentication"
	"github.com/orca-project/orca/internal/registry/authorization"
	"github.com/orca-project/orca/internal/registry/autoscaling"
	"github.com/orca-project/orca/internal/registry/batch"
	"github.com/orca-project/orca/internal/registry/certificates"
	"github.com/orca-project/orca/internal/registry/coordination"
	"github.com/orca-project/orca/internal/registry/core"
	"github.com/orca-project/orca/internal/registry/discovery"
	"github.com/orca-project/orca/internal/registry/events"
	"github.com/orca-project/orca/internal/registry/flowcontrol"
	"github.com/orca-project/orca/internal/registry/metrics"
	"github.com/orca-project/orca/internal/registry/networking"
	"github.com/orca-project/orca/internal/registry/node"
	"github.com/orca-project/orca/internal/registry/policy"
	"github.com/orca-project/orca/internal/registry/rbac"
	"github.com/orca-project/orca/internal/registry/resource"
	"github.com/orca-project/orca/internal/registry/scheduling"
	"github.com/orca-project/orca/internal/registry/storage"
	"github.com/orca-project/orca/internal/registry/storageclass"
	"github.com/orca-project/orca/internal/registry/storagemigration"
)

// Resources returns every served resource. Groups appear in the order
// upstream's discovery lists them, the core group first.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		core.Namespaces, core.Pods, core.Nodes, core.Services, core.Endpoints,
		core.Configmaps, core.Secrets, core.Serviceaccounts,
		core.Persistentvolumes, core.Persistentvolumeclaims,
		core.Resourcequotas, core.Limitranges, core.Events,
		core.Replicationcontrollers, core.Podtemplates, core.Componentstatuses,
		apps.Deployments, apps.Replicasets, apps.Statefulsets, apps.Daemonsets,
		apps.Controllerrevisions,
		events.Events,
		authorization.Selfsubjectaccessreviews, authorization.Subjectaccessreviews,
		authorization.Localsubjectaccessreviews, authorization.Selfsubjectrulesreviews,
		authentication.Tokenreviews, authentication.Selfsubjectreviews,
		autoscaling.HorizontalPodAutoscalers, autoscaling.HorizontalPodAutoscalersV1,
		batch.Jobs, batch.Cronjobs,
		certificates.Certificatesigningrequests, certificates.Clustertrustbundles,
		certificates.Podcertificaterequests,
		networking.Ingressclasses, networking.Ingresses, networking.Ipaddresses,
		networking.Networkpolicies, networking.Servicecidrs,
		policy.Poddisruptionbudgets,
		rbac.Roles, rbac.Rolebindings, rbac.Clusterroles, rbac.Clusterrolebindings,
		storage.Csidrivers, storage.Csinodes, storage.Csistoragecapacities, storageclass.Storageclasses,
		storage.Volumeattachments, storage.Volumeattributesclasses,
		admissionregistration.MutatingAdmissionPolicies, admissionregistration.MutatingAdmissionPolicyBindings,
		admissionregistration.MutatingWebhookConfigurations, admissionregistration.ValidatingAdmissionPolicies,
		admissionregistration.ValidatingAdmissionPolicyBindings, admissionregistration.ValidatingWebhookConfigurations,
		apiextensions.CustomResourceDefinitions,
		apiregistration.APIServices,
		coordination.Leases,
		discovery.Endpointslices,
		scheduling.Priorityclasses,
		node.Runtimeclasses,
		resource.Deviceclasses, resource.Resourceclaims, resource.Resourceclaimtemplates,
		resource.Resourceslices, resource.Devicetaintrules,
		flowcontrol.Flowschemas, flowcontrol.Prioritylevelconfigurations,
		storagemigration.Storageversionmigrations,
		metrics.NodeMetrics, metrics.PodMetrics,
	}
}
