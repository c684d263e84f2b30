package apiserver

import (
	"fmt"
	"reflect"
	"testing"
)

// TestParseAccept: the parsed form of an Accept header, and the same again
// when it comes from the cache; headers past the cache's size are parsed
// every time and not kept.
func TestParseAccept(t *testing.T) {
	cases := []struct {
		header string
		want   []mediaType
	}{
		{"", []mediaType{{Type: mediaJSON}}},
		{"application/vnd.kubernetes.protobuf, */*", []mediaType{{Type: mediaProtobuf, Params: map[string]string{}}, {Type: "*/*", Params: map[string]string{}}}},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", []mediaType{
			{Type: mediaJSON, Params: map[string]string{"as": "Table", "v": "v1", "g": "meta.k8s.io"}}, {Type: mediaJSON, Params: map[string]string{}}}},
		{"not a type, application/yaml", []mediaType{{Type: mediaYAML, Params: map[string]string{}}}},
	}
	for _, c := range cases {
		for range 2 { // parsed, then cached
			if got := parseAccept(c.header); !reflect.DeepEqual(got, c.want) {
				t.Errorf("parseAccept(%q) = %+v, want %+v", c.header, got, c.want)
			}
		}
	}
	for i := range 2 * maxAcceptCached {
		h := fmt.Sprintf("application/json;x=%d", i)
		if got := parseAccept(h); len(got) != 1 || got[0].Params["x"] != fmt.Sprint(i) {
			t.Fatalf("parseAccept(%q) = %+v", h, got)
		}
	}
	if n := acceptCached.Load(); n > maxAcceptCached {
		t.Errorf("%d headers cached, at most %d wanted", n, maxAcceptCached)
	}
}
