package server

import (
	"path/filepath"
	"testing"
)

func TestSigningKeySurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tls", serviceAccountKeyFile)
	first, err := loadOrCreateSigningKey(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadOrCreateSigningKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Equal(again) {
		t.Error("the key was replaced on the second start; tokens already issued would stop working")
	}
}
