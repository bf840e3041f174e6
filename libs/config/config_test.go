package config

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("hunter2-very-secret")
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cfg", "key", s, "cfg", struct{ K Secret }{s})
	out := buf.String() + fmt.Sprintf("%v %s %+v", s, s, struct{ K Secret }{s})
	if strings.Contains(out, "hunter2") {
		t.Fatalf("secret printed: %s", out)
	}
	if s.Reveal() != "hunter2-very-secret" {
		t.Fatal("Reveal lost the secret")
	}
}
