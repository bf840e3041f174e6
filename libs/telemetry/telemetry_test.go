package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestWithLogOutput: a service set up under WithLogOutput writes its JSON lines, with its
// name, to the writer given, at the level asked, and nothing below it.
func TestWithLogOutput(t *testing.T) {
	var buf bytes.Buffer
	tel, err := Setup(WithLogOutput(context.Background(), &buf), "test-svc", "warn")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	tel.Logger.Info("not at this level")
	tel.Logger.Warn("written", "k", "v")
	var line struct {
		Msg, Service, K string
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("one JSON line: %q: %v", buf.String(), err)
	}
	if line.Msg != "written" || line.Service != "test-svc" || line.K != "v" {
		t.Fatalf("logged %q", buf.String())
	}
}
