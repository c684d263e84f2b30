package bootstrappolicy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
)

// Reconcile writes the default policy through client, as upstream's API
// server does after it starts: a missing object is created; an object
// whose autoupdate annotation is not "false" gets back the rules, the
// aggregation selectors and the subjects it lacks (and is recreated when
// a binding's roleRef changed, which the API cannot update), and nothing a
// user added is removed; an object marked autoupdate=false is left alone.
//
// Every object is tried even when some fail, so one bad object does not
// hold back the rest; the errors are returned together and the caller
// retries the whole, which is idempotent. Unlike upstream, it does not
// migrate the rules of roles written by releases older than aggregation
// (v1.9) or older than system:public-info-viewer (v1.14): no Orca cluster
// holds such objects.
func Reconcile(ctx context.Context, client kubernetes.Interface, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "rbac-bootstrap")
	var errs []error
	for _, r := range ClusterRoles() {
		errs = append(errs, reconcileRole(ctx, log, "clusterrole",
			reconciliation.ClusterRoleRuleOwner{ClusterRole: r.DeepCopy()}, clusterRoleClient{ctx, client}))
	}
	for _, b := range ClusterRoleBindings() {
		errs = append(errs, reconcileBinding(ctx, log, "clusterrolebinding",
			reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b.DeepCopy()}, clusterRoleBindingClient{ctx, client}))
	}
	roles, bindings := NamespaceRoles(), NamespaceRoleBindings()
	for _, ns := range sortedKeys(roles) {
		for _, r := range roles[ns] {
			errs = append(errs, reconcileRole(ctx, log, "role",
				reconciliation.RoleRuleOwner{Role: r.DeepCopy()}, roleClient{ctx, client}))
		}
	}
	for _, ns := range sortedKeys(bindings) {
		for _, b := range bindings[ns] {
			errs = append(errs, reconcileBinding(ctx, log, "rolebinding",
				reconciliation.RoleBindingAdapter{RoleBinding: b.DeepCopy()}, roleBindingClient{ctx, client}))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bootstrap RBAC policy: %w", err)
	}
	return nil
}

func reconcileRole(ctx context.Context, log *slog.Logger, kind string, role reconciliation.RuleOwner, client reconciliation.RuleOwnerModifier) error {
	opts := reconciliation.ReconcileRoleOptions{Role: role, Client: client, Confirm: true}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := opts.Run()
		if err != nil {
			return err
		}
		logOutcome(log, kind, role.GetNamespace(), role.GetName(), res.Operation, res.Protected,
			"missingRules", len(res.MissingRules), "missingSelectors", len(res.MissingAggregationRuleSelectors))
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, objectName(role.GetNamespace(), role.GetName()), err)
	}
	return nil
}

func reconcileBinding(ctx context.Context, log *slog.Logger, kind string, binding reconciliation.RoleBinding, client reconciliation.RoleBindingModifier) error {
	opts := reconciliation.ReconcileRoleBindingOptions{RoleBinding: binding, Client: client, Confirm: true}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := opts.Run()
		if err != nil {
			return err
		}
		logOutcome(log, kind, binding.GetNamespace(), binding.GetName(), res.Operation, res.Protected,
			"missingSubjects", len(res.MissingSubjects))
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, objectName(binding.GetNamespace(), binding.GetName()), err)
	}
	return nil
}

func logOutcome(log *slog.Logger, kind, namespace, name string, op reconciliation.ReconcileOperation, protected bool, detail ...any) {
	attrs := append([]any{kind, objectName(namespace, name)}, detail...)
	switch {
	case protected && op != reconciliation.ReconcileNone:
		log.Warn("skipped an RBAC default marked autoupdate=false that lacks what the defaults grant", attrs...)
	case op == reconciliation.ReconcileCreate:
		log.Info("created RBAC default", attrs...)
	case op == reconciliation.ReconcileUpdate:
		log.Info("restored RBAC default", attrs...)
	case op == reconciliation.ReconcileRecreate:
		log.Info("recreated RBAC default binding with a new roleRef", attrs...)
	}
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The adapters below give component-helpers' reconciliation, whose
// interfaces take no context, a client bound to the caller's context;
// component-helpers' own adapters use context.TODO.

type clusterRoleClient struct {
	ctx    context.Context
	client kubernetes.Interface
}

func (c clusterRoleClient) Get(_, name string) (reconciliation.RuleOwner, error) {
	r, err := c.client.RbacV1().ClusterRoles().Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

func (c clusterRoleClient) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	r, err := c.client.RbacV1().ClusterRoles().Create(c.ctx, in.(reconciliation.ClusterRoleRuleOwner).ClusterRole, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

func (c clusterRoleClient) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	r, err := c.client.RbacV1().ClusterRoles().Update(c.ctx, in.(reconciliation.ClusterRoleRuleOwner).ClusterRole, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

type roleClient struct {
	ctx    context.Context
	client kubernetes.Interface
}

func (c roleClient) Get(namespace, name string) (reconciliation.RuleOwner, error) {
	r, err := c.client.RbacV1().Roles(namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

func (c roleClient) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	if err := ensureNamespace(c.ctx, c.client, in.GetNamespace()); err != nil {
		return nil, err
	}
	r, err := c.client.RbacV1().Roles(in.GetNamespace()).Create(c.ctx, in.(reconciliation.RoleRuleOwner).Role, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

func (c roleClient) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	r, err := c.client.RbacV1().Roles(in.GetNamespace()).Update(c.ctx, in.(reconciliation.RoleRuleOwner).Role, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

type clusterRoleBindingClient struct {
	ctx    context.Context
	client kubernetes.Interface
}

func (c clusterRoleBindingClient) Get(_, name string) (reconciliation.RoleBinding, error) {
	b, err := c.client.RbacV1().ClusterRoleBindings().Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindingClient) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	b, err := c.client.RbacV1().ClusterRoleBindings().Create(c.ctx, in.(reconciliation.ClusterRoleBindingAdapter).ClusterRoleBinding, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindingClient) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	b, err := c.client.RbacV1().ClusterRoleBindings().Update(c.ctx, in.(reconciliation.ClusterRoleBindingAdapter).ClusterRoleBinding, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindingClient) Delete(_, name string, uid types.UID) error {
	return c.client.RbacV1().ClusterRoleBindings().Delete(c.ctx, name, uidPrecondition(uid))
}

type roleBindingClient struct {
	ctx    context.Context
	client kubernetes.Interface
}

func (c roleBindingClient) Get(namespace, name string) (reconciliation.RoleBinding, error) {
	b, err := c.client.RbacV1().RoleBindings(namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c roleBindingClient) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	if err := ensureNamespace(c.ctx, c.client, in.GetNamespace()); err != nil {
		return nil, err
	}
	b, err := c.client.RbacV1().RoleBindings(in.GetNamespace()).Create(c.ctx, in.(reconciliation.RoleBindingAdapter).RoleBinding, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c roleBindingClient) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	b, err := c.client.RbacV1().RoleBindings(in.GetNamespace()).Update(c.ctx, in.(reconciliation.RoleBindingAdapter).RoleBinding, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c roleBindingClient) Delete(namespace, name string, uid types.UID) error {
	return c.client.RbacV1().RoleBindings(namespace).Delete(c.ctx, name, uidPrecondition(uid))
}

// uidPrecondition deletes only the object that was read, not one created
// in its place meanwhile.
func uidPrecondition(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

// ensureNamespace creates a namespace a default Role lives in when it is
// missing, as upstream does; Orca's API server makes kube-system and
// kube-public itself, so this matters only against another server.
// Forbidden is ignored: the create of the Role then reports the real
// problem.
func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil || apierrors.IsForbidden(err) {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsForbidden(err) {
		return nil
	}
	return err
}

var (
	_ reconciliation.RuleOwnerModifier   = clusterRoleClient{}
	_ reconciliation.RuleOwnerModifier   = roleClient{}
	_ reconciliation.RoleBindingModifier = clusterRoleBindingClient{}
	_ reconciliation.RoleBindingModifier = roleBindingClient{}
)
