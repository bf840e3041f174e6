// Package channels tests channel distribution end to end (docs/channels.md): Channex's PMS
// certification scenarios and the same through the OpenTravel adapter, each by the real
// action in vros through edge (interface A and B calls, and the public inbound route the
// channel manager posts to), asserting the calls the fake channel manager received; and the
// race of a night booked directly and by a channel at once. One stack serves every test;
// the fakes (testkit/fakechannex, testkit/fakepmsx) are started once and every test owns
// its account, its properties and the fake's properties mapped to them, so the tests run in
// parallel.
//
// The crash scenarios (kill -9 of integration-svc) are in systest/chancrash, the ARI
// propagation benchmark in systest/bench (channels_bench_test.go).
package channels

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

const adminToken = "channels-admin-token-0123456789"

// within bounds every wait on the stack (a consumer, the sender, a fake): liveness on a
// loaded machine, never a measure of speed (make bench measures it).
const within = 2 * time.Minute

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	client  = &http.Client{Timeout: time.Minute}
	chx     *fakechannex.Server
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", "8")
	}
	ctx := context.Background()
	var err error
	if chx, err = fakechannex.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chx.Close()
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: stack.NewKeys(), EncryptionKey: seal.NewKey(), AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4,
		Integration: channelConfig,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		_ = mongoDB.Disconnect(ctx)
		if err := st.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stack close:", err)
		}
	}()
	// Every exchange with edge is checked against the OpenAPI documents (edge/openapi), as
	// in systest/e2e: the tests' own calls, and the fakes' webhooks and pushes to the inbound
	// route (sent with the default transport). An answer that drifts fails the suite.
	contract, err := apitest.NewContract(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if u, err := url.Parse(st.EdgeURL); err == nil {
		contract.Host = u.Host
	}
	base := http.DefaultTransport
	http.DefaultTransport = contract.Through(base)
	client.Transport = contract.Through(base)
	code := m.Run()
	if v := contract.Violations(); len(v) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d of %d exchanges break the OpenAPI documents (edge/openapi):\n", len(v), contract.Checked())
		for _, line := range v {
			fmt.Fprintln(os.Stderr, " -", line)
		}
		code = 1
	}
	return code
}

// flagSet tells whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// newAccount opens an account that may name the fakes' loopback addresses.
func newAccount(t *testing.T) chantest.Account {
	t.Helper()
	a, err := chantest.NewAccount(client, st.EdgeURL, adminToken, "Channel Owner")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// envInt is an integer environment variable, def when unset.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
