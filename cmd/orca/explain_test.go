package main

import "testing"

func TestPodArg(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		wantErr bool
	}{
		{[]string{"pod/web"}, "web", false},
		{[]string{"pods/web"}, "web", false},
		{[]string{"po/web"}, "web", false},
		{[]string{"pod", "web"}, "web", false},
		{[]string{"web"}, "", true},
		{[]string{"deployment/web"}, "", true},
		{[]string{"pod/"}, "", true},
	} {
		got, err := podArg(tc.args)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("podArg(%q) = %q, %v; want %q, error %v", tc.args, got, err, tc.want, tc.wantErr)
		}
	}
}
