package flowcontrol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

// ConfigProducerFieldManager is the field manager of the bootstrap
// objects, upstream's.
const ConfigProducerFieldManager = "api-priority-and-fairness-config-producer-v1"

// ensurePeriod is how often the bootstrap objects are checked, as
// upstream's post-start hook does.
const ensurePeriod = time.Minute

// RunEnsurer keeps upstream's bootstrap configuration (see Ensure) every
// minute until ctx ends.
func RunEnsurer(ctx context.Context, client kubernetes.Interface, log *slog.Logger) {
	t := time.NewTicker(ensurePeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := Ensure(ctx, client, log); err != nil && ctx.Err() == nil {
			log.Warn("API Priority and Fairness bootstrap configuration", "err", err)
		}
	}
}

// Ensure creates upstream's bootstrap configuration and keeps it, as
// upstream's ensurer does (the apf.kubernetes.io/autoupdate-spec
// annotation):
//
//   - a missing object, mandatory or suggested, is created;
//   - a mandatory object always gets its spec back, and its annotation
//     set to "true" (of the exempt level, an administrator may change
//     nominalConcurrencyShares and lendablePercent);
//   - a suggested object gets its spec back while its annotation is
//     "true", or absent (or not a boolean) on an object never changed
//     (generation 1); the annotation is then written to say which;
//   - an object annotated "true" that is no longer part of the
//     configuration is deleted.
//
// Levels go before schemas so that no schema dangles. Every object is
// tried even when some fail.
func Ensure(ctx context.Context, client kubernetes.Interface, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	pls := client.FlowcontrolV1().PriorityLevelConfigurations()
	fss := client.FlowcontrolV1().FlowSchemas()
	plList, err := pls.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fsList, err := fss.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	currentPL := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for i := range plList.Items {
		currentPL[plList.Items[i].Name] = &plList.Items[i]
	}
	currentFS := map[string]*flowcontrolv1.FlowSchema{}
	for i := range fsList.Items {
		currentFS[fsList.Items[i].Name] = &fsList.Items[i]
	}
	create := metav1.CreateOptions{FieldManager: ConfigProducerFieldManager}
	update := metav1.UpdateOptions{FieldManager: ConfigProducerFieldManager}
	var errs []error
	note := func(kind, name, what string, err error) {
		switch {
		case err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("%s %s: %w", kind, name, err))
		case err == nil:
			log.Info(what+" API Priority and Fairness bootstrap object", "kind", kind, "name", name)
		}
	}

	ensureLevels := func(objs []*flowcontrolv1.PriorityLevelConfiguration, mandatory bool) {
		for _, want := range objs {
			cur := currentPL[want.Name]
			if cur == nil {
				_, err := pls.Create(ctx, want, create)
				note("PriorityLevelConfiguration", want.Name, "created", err)
				continue
			}
			if next, ok := keepLevel(cur, want, mandatory); ok {
				_, err := pls.Update(ctx, next, update)
				note("PriorityLevelConfiguration", want.Name, "updated", err)
			}
		}
	}
	ensureSchemas := func(objs []*flowcontrolv1.FlowSchema, mandatory bool) {
		for _, want := range objs {
			cur := currentFS[want.Name]
			if cur == nil {
				_, err := fss.Create(ctx, want, create)
				note("FlowSchema", want.Name, "created", err)
				continue
			}
			if next, ok := keepSchema(cur, want, mandatory); ok {
				_, err := fss.Update(ctx, next, update)
				note("FlowSchema", want.Name, "updated", err)
			}
		}
	}
	ensureLevels(registry.SuggestedPriorityLevelConfigurations(), false)
	ensureSchemas(registry.SuggestedFlowSchemas(), false)
	ensureLevels(registry.MandatoryPriorityLevelConfigurations(), true)
	ensureSchemas(registry.MandatoryFlowSchemas(), true)

	bootstrapPL, bootstrapFS := map[string]bool{}, map[string]bool{}
	for _, pl := range append(registry.MandatoryPriorityLevelConfigurations(), registry.SuggestedPriorityLevelConfigurations()...) {
		bootstrapPL[pl.Name] = true
	}
	for _, fs := range append(registry.MandatoryFlowSchemas(), registry.SuggestedFlowSchemas()...) {
		bootstrapFS[fs.Name] = true
	}
	for name, fs := range currentFS {
		if !bootstrapFS[name] && removable(fs.ObjectMeta) {
			err := fss.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &fs.ResourceVersion}})
			note("FlowSchema", name, "deleted", ignoreConflict(err))
		}
	}
	for name, pl := range currentPL {
		if !bootstrapPL[name] && removable(pl.ObjectMeta) {
			err := pls.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &pl.ResourceVersion}})
			note("PriorityLevelConfiguration", name, "deleted", ignoreConflict(err))
		}
	}
	return errors.Join(errs...)
}

// ignoreConflict treats an object changed since it was listed as one
// to look at again next time.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// removable is an object that once was part of the bootstrap
// configuration and is still left to the server.
func removable(m metav1.ObjectMeta) bool {
	v, ok := m.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]
	if !ok {
		return false
	}
	auto, err := strconv.ParseBool(v)
	return err == nil && auto
}

// autoUpdate decides, for an existing bootstrap object, whether its spec
// is the server's to keep and whether its annotation must be rewritten
// to say so.
func autoUpdate(m metav1.ObjectMeta, mandatory bool) (keepSpec, rewriteAnnotation bool) {
	v, ok := m.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]
	parsed, err := strconv.ParseBool(v)
	switch {
	case mandatory:
		keepSpec = true
	case ok && err == nil:
		keepSpec = parsed
	default:
		// Without a usable annotation, an object whose spec nobody
		// changed is still the server's.
		keepSpec = m.Generation == 1
	}
	return keepSpec, !(ok && err == nil && parsed == keepSpec)
}

func setAutoUpdate(m *metav1.ObjectMeta, v bool) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(v)
}

// keepLevel returns the level to write back, if any.
func keepLevel(cur, want *flowcontrolv1.PriorityLevelConfiguration, mandatory bool) (*flowcontrolv1.PriorityLevelConfiguration, bool) {
	keepSpec, rewrite := autoUpdate(cur.ObjectMeta, mandatory)
	changed := keepSpec && !levelSpecEqualish(want, cur)
	if !rewrite && !changed {
		return nil, false
	}
	next := cur.DeepCopy()
	if rewrite {
		setAutoUpdate(&next.ObjectMeta, keepSpec)
	}
	if changed {
		next.Spec = *want.Spec.DeepCopy()
	}
	return next, true
}

// levelSpecEqualish compares specs after defaulting, leaving out what an
// administrator may set on the exempt level.
func levelSpecEqualish(want, cur *flowcontrolv1.PriorityLevelConfiguration) bool {
	w := want.DeepCopy()
	registry.DefaultPriorityLevelConfiguration(w)
	if w.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		if cur.Spec.Exempt == nil {
			return false
		}
		w.Spec.Exempt.NominalConcurrencyShares = cur.Spec.Exempt.NominalConcurrencyShares
		w.Spec.Exempt.LendablePercent = cur.Spec.Exempt.LendablePercent
	}
	return apiequality.Semantic.DeepEqual(w.Spec, cur.Spec)
}

// keepSchema returns the schema to write back, if any.
func keepSchema(cur, want *flowcontrolv1.FlowSchema, mandatory bool) (*flowcontrolv1.FlowSchema, bool) {
	keepSpec, rewrite := autoUpdate(cur.ObjectMeta, mandatory)
	changed := keepSpec && !apiequality.Semantic.DeepEqual(want.Spec, cur.Spec)
	if !rewrite && !changed {
		return nil, false
	}
	next := cur.DeepCopy()
	if rewrite {
		setAutoUpdate(&next.ObjectMeta, keepSpec)
	}
	if changed {
		next.Spec = *want.Spec.DeepCopy()
	}
	return next, true
}
