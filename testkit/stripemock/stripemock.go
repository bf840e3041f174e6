// Package stripemock starts Stripe's own API mock, stripe-mock (a Go program, pinned as a
// tool of the libs module), for tests of the Stripe card gateway.
//
// stripe-mock checks every request against Stripe's OpenAPI specification and answers with
// fixtures; it keeps no state and never declines a card. What it answers for payment
// intents:
//   - create (POST /v1/payment_intents): a new random id, and the request's scalar
//     parameters reflected (amount, currency, description; not metadata); the rest, status
//     and client_secret included, from the fixture;
//   - retrieve (GET /v1/payment_intents/{id}) and cancel (POST …/{id}/cancel): the id of the
//     URL reflected, everything else from the fixture (a cancel does not answer "canceled"
//     unless the fixture says so);
//   - the client_secret is always the fixture's, so it does not start with the id;
//   - an Idempotency-Key header is only echoed in the answer's headers; a key is accepted
//     when it looks like a test-mode secret key ("sk_test_…"), anything else answers 401
//     with a message that repeats the Authorization header.
//
// The outcome of a payment is therefore chosen when it starts: Start takes the status its
// payment intents answer with ("succeeded", "requires_action", …), and options such as
// IntentAmount the amount and currency they read back with, so that a test's intent reads
// back as what it asked for. Only those fields of the bundled fixtures change.
package stripemock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const module = "github.com/stripe/stripe-mock"

var build struct {
	once sync.Once
	bin  string
	dir  string // the module's source, for its fixtures
	err  error
}

// binary builds stripe-mock once per test process (the Go build cache keeps it across runs).
func binary() (bin, dir string, err error) {
	build.once.Do(func() {
		tmp, err := os.MkdirTemp("", "stripe-mock-*")
		if err != nil {
			build.err = err
			return
		}
		// Build first: it downloads the module when the cache lacks it, which `go list -m`
		// does not (it then names no directory, and the fixtures are not found).
		build.bin = filepath.Join(tmp, "stripe-mock")
		if out, err := exec.Command("go", "build", "-o", build.bin, module).CombinedOutput(); err != nil {
			build.err = fmt.Errorf("build %s: %w\n%s", module, err, out)
			return
		}
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
		if build.dir = strings.TrimSpace(string(out)); err != nil || build.dir == "" {
			build.err = fmt.Errorf("locate %s: %v (directory %q)", module, err, build.dir)
		}
	})
	return build.bin, build.dir, build.err
}

// Option changes the payment intent fixture a stripe-mock answers with.
type Option func(intent map[string]any)

// IntentAmount makes payment intents read back (retrieve, cancel) as amount in currency:
// amount in the currency's smallest unit as Stripe counts (1234 for 12.34 EUR, 1234 for
// 1234 JPY), currency as Stripe writes it (lowercase). A create reflects its own amount and
// currency whatever the fixture says.
func IntentAmount(amount int64, currency string) Option {
	return func(intent map[string]any) {
		intent["amount"], intent["currency"] = amount, strings.ToLower(currency)
	}
}

// Start runs a stripe-mock on a loopback port whose payment intents answer with
// intentStatus (and opts), stops it when t ends, and returns its base URL.
func Start(t testing.TB, intentStatus string, opts ...Option) string {
	t.Helper()
	url, stop, err := Run(intentStatus, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// Run is Start for a TestMain: the caller stops the stripe-mock.
func Run(intentStatus string, opts ...Option) (url string, stop func(), err error) {
	bin, dir, err := binary()
	if err != nil {
		return "", nil, err
	}
	fixtures, err := fixturesWith(dir, intentStatus, opts)
	if err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp("", "stripe-mock-fixtures-*")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(tmp, "fixtures.json")
	if err := os.WriteFile(path, fixtures, 0o600); err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, err
	}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0", "-fixtures", path)
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.RemoveAll(tmp) }
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Listening for HTTP at address: "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("stripe-mock did not start listening within 30s")
	}
}

// fixturesWith returns stripe-mock's bundled fixtures with the payment intent's status set
// and opts applied.
func fixturesWith(dir, intentStatus string, opts []Option) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "embedded", "openapi", "fixtures3.json"))
	if err != nil {
		return nil, err
	}
	var f struct {
		Resources map[string]map[string]any `json:"resources"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("stripe-mock fixtures: %w", err)
	}
	pi, ok := f.Resources["payment_intent"]
	if !ok {
		return nil, fmt.Errorf("stripe-mock fixtures have no payment_intent")
	}
	pi["status"] = intentStatus
	for _, o := range opts {
		o(pi)
	}
	return json.Marshal(f)
}
