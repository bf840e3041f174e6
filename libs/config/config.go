// Package config loads a service's settings from prefixed environment variables.
//
// Each service declares one struct with `env` tags; Load fills it once at start-up,
// and nothing else in a service reads the environment.
package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/caarlos0/env/v11"
)

// Secret is a string that never prints: logs and %v show a mask.
type Secret string

// String masks the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// LogValue masks the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON masks the secret where a struct holding it is encoded (slog's JSON handler).
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }

// Common holds the settings every service shares.
type Common struct {
	MongoURI     string   `env:"VROS_MONGO_URI" envDefault:"mongodb://127.0.0.1:27017/?replicaSet=rs0"`
	KafkaBrokers []string `env:"VROS_KAFKA_BROKERS" envSeparator:"," envDefault:"127.0.0.1:9092"`
	// InternalKeys sign the requests between vros processes (docs/internal-auth.md); each
	// service is given only the ones it uses.
	InternalKeys InternalKeys
	LogLevel     string `env:"VROS_LOG_LEVEL" envDefault:"info"`
	// ShutdownDrain: after SIGTERM, how long the service keeps serving (every answer with
	// Connection: close, /readyz 503) before it stops accepting, so that load balancers and
	// pooled clients move to other replicas without a failed request (docs/kubernetes.md).
	ShutdownDrain time.Duration `env:"VROS_SHUTDOWN_DRAIN" envDefault:"0s"`
	// InternalAddr is the listener of /healthz, /readyz and /metrics, apart from the API's
	// port so that the Ingress, which routes the API, never exposes them (docs/observability.md).
	InternalAddr string `env:"VROS_INTERNAL_ADDR" envDefault:":9090"`
}

// InternalListener is InternalAddr, for code that holds a service's whole configuration,
// whose type embeds Common (daemon.Main).
func (c Common) InternalListener() string { return c.InternalAddr }

// Validate reports settings a service cannot start without.
func (c Common) Validate() error {
	if c.MongoURI == "" {
		return fmt.Errorf("VROS_MONGO_URI is required")
	}
	if len(c.KafkaBrokers) == 0 || c.KafkaBrokers[0] == "" {
		return fmt.Errorf("VROS_KAFKA_BROKERS is required")
	}
	return nil
}

// Environment variables of the internal keys, one per calling process.
const (
	KeyEdge        = "VROS_INTERNAL_KEY_EDGE"
	KeyBooking     = "VROS_INTERNAL_KEY_BOOKING"
	KeyIntegration = "VROS_INTERNAL_KEY_INTEGRATION"
	KeyMessaging   = "VROS_INTERNAL_KEY_MESSAGING"
)

// MinKeyLength is the shortest internal key accepted.
const MinKeyLength = 16

// InternalKeys are the keys of the signed tenant context, one per caller: edge signs every
// request it forwards with Edge, booking-svc its calls to property-svc with Booking,
// integration-svc its calls to booking-svc with Integration, messaging-svc its booking reads
// with Messaging. A service holds the key it
// signs with and those of the callers it accepts (docs/internal-auth.md).
type InternalKeys struct {
	Edge        Secret `env:"VROS_INTERNAL_KEY_EDGE"`
	Booking     Secret `env:"VROS_INTERNAL_KEY_BOOKING"`
	Integration Secret `env:"VROS_INTERNAL_KEY_INTEGRATION"`
	Messaging   Secret `env:"VROS_INTERNAL_KEY_MESSAGING"`
}

// Require reports the first of the named keys (KeyEdge, ...) that is missing or shorter
// than MinKeyLength.
func (k InternalKeys) Require(names ...string) error {
	for _, n := range names {
		var v Secret
		switch n {
		case KeyEdge:
			v = k.Edge
		case KeyBooking:
			v = k.Booking
		case KeyIntegration:
			v = k.Integration
		case KeyMessaging:
			v = k.Messaging
		default:
			return fmt.Errorf("config: no internal key %s", n)
		}
		if len(v) < MinKeyLength {
			return fmt.Errorf("%s must be at least %d characters", n, MinKeyLength)
		}
	}
	return nil
}

// Load parses the environment into a T.
func Load[T any]() (T, error) {
	cfg, err := env.ParseAs[T]()
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}
