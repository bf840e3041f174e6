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

// TestInternalAddr: the internal listener defaults to :9090 and follows VROS_INTERNAL_ADDR,
// also through a service's configuration that embeds Common.
func TestInternalAddr(t *testing.T) {
	type service struct {
		Common
		Addr string `env:"VROS_X_ADDR" envDefault:":8080"`
	}
	cfg, err := Load[service]()
	if err != nil || cfg.InternalAddr != ":9090" {
		t.Fatalf("default: %q %v, want :9090", cfg.InternalAddr, err)
	}
	t.Setenv("VROS_INTERNAL_ADDR", "127.0.0.1:9191")
	cfg, err = Load[service]()
	if err != nil || any(cfg).(interface{ InternalListener() string }).InternalListener() != "127.0.0.1:9191" {
		t.Fatalf("from the environment: %q %v", cfg.InternalAddr, err)
	}
}
