package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestArguments(t *testing.T) {
	for _, tc := range []struct {
		args             []string
		bundle, process  string
		isCreate, isExec bool
	}{
		{args: []string{"--root", "/r", "create", "--bundle", "/b", "id"}, bundle: "/b", isCreate: true},
		{args: []string{"run", "--bundle=/b2", "id"}, bundle: "/b2", isCreate: true},
		{args: []string{"create", "id"}, bundle: ".", isCreate: true},
		{args: []string{"--log", "/l", "exec", "--process", "/p.json", "-d", "id"}, process: "/p.json", isExec: true},
		{args: []string{"exec", "--process=/p2.json", "id"}, process: "/p2.json", isExec: true},
		{args: []string{"start", "id"}},
		{args: []string{"delete", "--force", "id"}},
	} {
		bundle, isCreate := bundleOf(tc.args)
		process, isExec := processOf(tc.args)
		if bundle != tc.bundle || isCreate != tc.isCreate || process != tc.process || isExec != tc.isExec {
			t.Errorf("%v: bundle %q %v, process %q %v; want %q %v, %q %v",
				tc.args, bundle, isCreate, process, isExec, tc.bundle, tc.isCreate, tc.process, tc.isExec)
		}
	}
}

// TestDropMissingCaps: the missing capability leaves every set; nothing else in the spec
// changes, and a spec that asks for nothing missing is not rewritten.
func TestDropMissingCaps(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "config.json")
	all := []any{"CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN"}
	write := func(v any) {
		raw, _ := json.Marshal(v)
		if err := os.WriteFile(spec, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(map[string]any{"ociVersion": "1.0.2", "process": map[string]any{"args": []any{"sh"},
		"capabilities": map[string]any{"bounding": all, "effective": all, "permitted": all}}})
	if err := dropMissingCaps(spec, map[string]bool{"CAP_SYS_RESOURCE": true}, "process", "capabilities"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		OCIVersion string `json:"ociVersion"`
		Process    struct {
			Args         []string            `json:"args"`
			Capabilities map[string][]string `json:"capabilities"`
		} `json:"process"`
	}
	raw, _ := os.ReadFile(spec)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"CAP_CHOWN", "CAP_SYS_ADMIN"}
	for _, set := range []string{"bounding", "effective", "permitted"} {
		if !slices.Equal(got.Process.Capabilities[set], want) {
			t.Errorf("%s: %v, want %v", set, got.Process.Capabilities[set], want)
		}
	}
	if got.OCIVersion != "1.0.2" || !slices.Equal(got.Process.Args, []string{"sh"}) {
		t.Errorf("other fields changed: %s", raw)
	}

	// An exec process spec has its sets at the top; nothing missing there: untouched.
	write(map[string]any{"capabilities": map[string]any{"effective": []any{"CAP_CHOWN"}}})
	before, _ := os.Stat(spec)
	raw0, _ := os.ReadFile(spec)
	if err := dropMissingCaps(spec, map[string]bool{"CAP_SYS_RESOURCE": true}, "capabilities"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(spec)
	raw1, _ := os.ReadFile(spec)
	if string(raw0) != string(raw1) || !before.ModTime().Equal(after.ModTime()) {
		t.Errorf("spec rewritten although nothing was missing: %s", raw1)
	}
}
