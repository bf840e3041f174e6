// Package chancrash kills integration-svc with SIGKILL while it syncs a channel manager and
// shows that channel distribution is exactly-once (docs/channels.md): a kill between
// applying a channel reservation's revision and acknowledging it, a kill in the middle of a
// full sync, and the fake's duplicate and out-of-order revisions leave every channel booking
// once, no night sold twice, and the channel manager holding the newest values, none of them
// received after a newer one. integration-svc runs here as its own binary, built from the
// workspace (as in systest/hookcrash), so that a kill is a real kill -9; the rest of vros runs
// in process. The fake Channex (testkit/fakechannex) stands behind a recording proxy
// (systest/chantest.Recorder) that can hold a request unanswered until the kill.
package chancrash

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/systest/chantest"
	"github.com/vros/vros/testkit/fakechannex"
)

const (
	adminToken = "chancrash-admin-token-0123456789"
	// lease is a sender's hold on a property: a property whose sender was killed is taken
	// up again this long after its last renewal.
	lease = "3s"
	// within bounds every wait (liveness on a loaded machine, never a measure of speed).
	within = 2 * time.Minute
)

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	svc     *proc.Service
	client  = &http.Client{Timeout: time.Minute}
	keys    = stack.NewKeys()
	chx     *fakechannex.Server
	rec     *chantest.Recorder
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "chancrash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if chx, err = fakechannex.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chx.Close()
	rec = chantest.NewRecorder(chx.URL())
	defer rec.Close()
	bin, addr, internal, err := proc.BuildService(tmp, "integration-svc", "../../integration-svc/cmd/integration-svc")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	encryptionKey := seal.NewKey()
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: keys, EncryptionKey: encryptionKey, AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4,
		NoIntegration: true, IntegrationURL: "http://" + addr,
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
	svc = &proc.Service{Name: "integration-svc", Bin: bin, LogPath: filepath.Join(tmp, "integration-svc.log"),
		InternalURL: "http://" + internal,
		Env: apitest.IntegrationEnv(st, keys, addr, internal, encryptionKey,
			// docs/channels.md, "Configuration": a killed sender's properties are taken up
			// again soon, requests time out before the lease ends, the feed is pulled often.
			"VROS_CHANNEL_LEASE="+lease,
			"VROS_CHANNEL_REQUEST_TIMEOUT=2s",
			"VROS_CHANNEL_ERROR_RETRY=1s",
			"VROS_CHANNEL_PULL_PERIOD=1s",
			"VROS_CHANNEL_POLL=100ms",
		)}
	defer svc.Kill() // no process left behind, whatever happened
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, svc.LogTail())
		return 1
	}
	return m.Run()
}

// ensureRunning starts integration-svc if an earlier test left it stopped, and shows its log
// when the test fails.
func ensureRunning(t *testing.T) { apitest.EnsureRunning(t, svc) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setup is an account connected to the fake Channex through the recorder, with mapped
// properties.
type setup struct {
	acc  chantest.Account
	conn chantest.Connection
	key  string
	ps   []prop
}

// prop is a vros property mapped to a Channex property of one room type and one rate plan.
type prop struct {
	pid              int64
	code             string
	remote, room, rp string
}

func newSetup(t *testing.T, days, props int) *setup {
	t.Helper()
	acc, err := chantest.NewAccount(client, st.EdgeURL, adminToken, "Channel Crash Owner")
	must(t, err)
	s := &setup{acc: acc, key: "key-" + fakechannex.NewID()}
	s.conn, err = acc.Connect("channex", rec.URL, chantest.Obj{"api_key": s.key}, days)
	must(t, err)
	for i := range props {
		p := prop{code: fmt.Sprintf("KILL%d", i)}
		p.pid, err = acc.Property(p.code)
		must(t, err)
		fp := chx.AddProperty(s.key, fakechannex.Property{Title: "Crash " + p.code, Currency: "USD",
			RoomTypes: []fakechannex.RoomType{{Title: "Villa", RatePlans: []string{""}}}})
		p.remote, p.room, p.rp = fp.ID, fp.RoomTypes[0].ID, fp.RoomTypes[0].RatePlans[0]
		s.ps = append(s.ps, p)
	}
	return s
}

// mapAll maps every property (each mapping starts its full sync).
func (s *setup) mapAll(t *testing.T) {
	t.Helper()
	for _, p := range s.ps {
		must(t, s.acc.Map(s.conn.ID(), p.code, p.remote, p.room, chantest.Plan{RatePlanID: 0, RemoteRatePlanID: p.rp}))
	}
}

// waitFake waits on the fake until cond holds.
func waitFake(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := chx.Wait(ctx, cond); err != nil {
		t.Fatalf("%s: not within %v: %v", what, within, err)
	}
}

// inboundURL is the connection's inbound URL, absolute.
func inboundURL(c chantest.Connection) string {
	if strings.HasPrefix(c.InboundURL, "http") {
		return c.InboundURL
	}
	if c.InboundURL != "" {
		return st.EdgeURL + c.InboundURL
	}
	return st.EdgeURL + "/channels/" + c.Adapter + "/" + c.InboundToken
}
