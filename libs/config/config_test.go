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

// TestInternalKeys: each caller's key comes from its own variable, and Require names the
// first key a service needs that is missing or short.
func TestInternalKeys(t *testing.T) {
	t.Setenv(KeyEdge, "edge-key-0123456789")
	t.Setenv(KeyIntegration, "short")
	t.Setenv(KeyMessaging, "messaging-key-0123456789")
	cfg, err := Load[Common]()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.InternalKeys.Edge.Reveal() != "edge-key-0123456789" || cfg.InternalKeys.Integration.Reveal() != "short" || cfg.InternalKeys.Booking != "" ||
		cfg.InternalKeys.Messaging.Reveal() != "messaging-key-0123456789" {
		t.Fatalf("keys %+v", cfg.InternalKeys)
	}
	for _, c := range []struct {
		need []string
		want string // in the error; "" for none
	}{
		{[]string{KeyEdge}, ""},
		{nil, ""},
		{[]string{KeyEdge, KeyBooking}, KeyBooking + " must be at least 16 characters"},
		{[]string{KeyIntegration}, KeyIntegration + " must be at least 16 characters"},
		{[]string{KeyEdge, KeyMessaging}, ""},
		{[]string{"VROS_INTERNAL_HMAC_KEY"}, "no internal key VROS_INTERNAL_HMAC_KEY"},
	} {
		err := cfg.InternalKeys.Require(c.need...)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Require(%v): %v, want %q", c.need, err, c.want)
		}
	}
}
