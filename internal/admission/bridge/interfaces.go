package bridge

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upstream "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/orca-project/orca/internal/admission"
)

// Interfaces are upstream's object interfaces for one request. The
// server's objects are already in the version served (upstream's are in
// an internal version), so converting between two objects of one kind is
// a copy; custom resources are unstructured and carry their own kind.
func Interfaces(a *admission.Attributes) upstream.ObjectInterfaces {
	return objectInterfaces{a}
}

type objectInterfaces struct{ a *admission.Attributes }

func (o objectInterfaces) GetObjectCreater() runtime.ObjectCreater { return creater{} }
func (o objectInterfaces) GetObjectTyper() runtime.ObjectTyper     { return typer{} }
func (o objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter {
	return defaulter{apply: o.a.Default, typ: reflect.TypeOf(o.a.Object)}
}
func (o objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return convertor{o.a} }
func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return equivalents{o.a}
}

type creater struct{}

func (creater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if scheme.Scheme.Recognizes(kind) {
		return scheme.Scheme.New(kind)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

type typer struct{}

func (typer) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" {
			return nil, false, runtime.NewMissingKindErr("unstructured object has no kind")
		}
		return []schema.GroupVersionKind{gvk}, false, nil
	}
	return scheme.Scheme.ObjectKinds(obj)
}

func (typer) Recognizes(gvk schema.GroupVersionKind) bool { return true }

// defaulter applies the resource's defaults to objects of the request's
// Go type, the only ones its defaults are written for.
type defaulter struct {
	apply func(runtime.Object)
	typ   reflect.Type
}

func (d defaulter) Default(obj runtime.Object) {
	if d.apply != nil && reflect.TypeOf(obj) == d.typ {
		d.apply(obj)
	}
}

// convertor copies between objects of one Go type and converts anything
// else with client-go's scheme. Upstream's dispatchers convert a changed
// object back into the request's, which is how the request learns it was
// patched.
type convertor struct{ a *admission.Attributes }

func (c convertor) Convert(in, out, context any) error {
	if out == c.a.Object && in != out {
		c.a.Patched = true
	}
	if iu, ok := in.(*unstructured.Unstructured); ok {
		ou, ok := out.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("convert unstructured to %T: not supported", out)
		}
		ou.Object = runtime.DeepCopyJSON(iu.Object)
		return nil
	}
	iv, ov := reflect.ValueOf(in), reflect.ValueOf(out)
	if iv.Type() == ov.Type() && iv.Kind() == reflect.Pointer {
		ov.Elem().Set(reflect.ValueOf(in.(runtime.Object).DeepCopyObject()).Elem())
		return nil
	}
	return scheme.Scheme.Convert(in, out, context)
}

// ConvertToVersion copies an object into the kind gv asks for; an
// unstructured object of a built-in kind (a policy's patch result)
// becomes that kind's Go type again.
func (convertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	gvk := in.GetObjectKind().GroupVersionKind()
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if u, isU := in.(*unstructured.Unstructured); isU {
		if !ok || !scheme.Scheme.Recognizes(target) {
			return u.DeepCopy(), nil
		}
		typed, err := scheme.Scheme.New(target)
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, err
		}
		typed.GetObjectKind().SetGroupVersionKind(target)
		return typed, nil
	}
	if ok && target == gvk {
		return in.DeepCopyObject(), nil
	}
	return scheme.Scheme.ConvertToVersion(in, gv)
}

func (convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
