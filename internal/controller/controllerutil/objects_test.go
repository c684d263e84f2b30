package controllerutil

import "k8s.io/apimachinery/pkg/runtime"

type runtimeObject = runtime.Object

func toObjects(in []runtimeObject) []runtime.Object { return in }
