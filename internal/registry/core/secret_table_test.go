package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestSecretTable(t *testing.T) {
	checkTableColumns(t, secretTable, []tableCol{{"Type", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}})
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(time.Minute)},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": nil, "tls.key": nil},
	}
	if got := tableRow(t, secretTable, s); !reflect.DeepEqual(got, []any{"kubernetes.io/tls", int64(2), "60s"}) {
		t.Errorf("got %#v", got)
	}
	if got := secretFields(s); !reflect.DeepEqual(got, fields.Set{"type": "kubernetes.io/tls"}) {
		t.Errorf("fields %v", got)
	}
}

func TestConfigMapTable(t *testing.T) {
	checkTableColumns(t, configmapTable, []tableCol{{"Data", "string", 0}, {"Age", "string", 0}})
	cm := &corev1.ConfigMap{Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}}
	if got := tableRow(t, configmapTable, cm); !reflect.DeepEqual(got, []any{int64(2), "<unknown>"}) {
		t.Errorf("got %#v", got)
	}
	if configmapFields != nil {
		t.Error("configmaps have no extra fields upstream")
	}
}

func TestServiceAccountTable(t *testing.T) {
	checkTableColumns(t, serviceaccountTable, []tableCol{{"Secrets", "string", 0}, {"Age", "string", 0}})
	sa := &corev1.ServiceAccount{Secrets: []corev1.ObjectReference{{Name: "t"}}}
	if got := tableRow(t, serviceaccountTable, sa); !reflect.DeepEqual(got, []any{int64(1), "<unknown>"}) {
		t.Errorf("got %#v", got)
	}
}
