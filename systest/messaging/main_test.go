// Package messaging proves issue 34's "Must show" end to end (docs/messaging.md): a whole vros
// (embedded servers, or make test-real's), every request through edge, messaging-svc sending
// through a real SMTP server the test starts as the operator's (testkit/smtpcatcher), and a
// test clock (apitest.Clock, messaging-svc's Config.Clock) that moves the scheduled messages'
// time forward.
//
//   - confirm_test.go: a booking's confirmation delivered, its headers and content, in the
//     booking's language; a guest named <script> arrives escaped; a broken template is
//     refused at save with its line and Go's error;
//   - schedule_test.go: a stay moved reschedules the arrival reminder (only the new one is
//     delivered once the clock passes it); a cancelled booking's reminder is never sent and
//     a cancellation is; the property's time zone decides a reminder's instant;
//   - kill_test.go: messaging-svc killed with SIGKILL during a burst of 200 bookings, each
//     confirmation delivered once, none lost. There messaging-svc runs as its own binary
//     (proc), built from the workspace, in place of the stack's (stopped for the test), on
//     the same store and consumer group.
//
// The tests run one after another: they move the one clock.
package messaging

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/devstack/proc"
	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/seal"
	messaging "github.com/vros/vros/messaging-svc/service"
	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/smtpcatcher"
)

const (
	adminToken = "messaging-admin-token-0123456789"
	// domain is VROS_MESSAGING_DOMAIN: the Message-IDs' right-hand side.
	domain = "mail.vros.test"
	// The operator's sender (VROS_MESSAGING_FROM), which an account without its own sends as.
	operatorName, operatorAddress = "Vros Stays", "stays@vros.test"
	// lease is how long a sender holds a message it sends (VROS_MESSAGING_LEASE): after a
	// kill, what the dead process held waits this long for another sender.
	lease = 10 * time.Second
	// poll is how often a sender looks for messages due (VROS_MESSAGING_POLL).
	poll = 100 * time.Millisecond
	// rate is the messages an account may send a minute (VROS_MESSAGING_RATE): no limit here,
	// the burst sends 200 of one account at once.
	rate = 100000
	// within bounds every wait on the stack: liveness on a loaded machine, not a measure. In
	// make test's real lane the servers' topics hold the bookings of the packages run before
	// (systest/e2e's, by the thousand), which this stack's messaging-svc, a new consumer
	// group, plans and sends first: the first test's confirmation waits behind that backlog
	// (869 messages in 115 s in one loaded run, where 90 s were not enough).
	within = 5 * time.Minute
)

var (
	st      *stack.Stack
	mongoDB *mongo.Client
	// catcher is the operator's SMTP server: every message of the tests arrives there.
	catcher *smtpcatcher.Catcher
	// clock is messaging-svc's (the stack's replica): Advance moves the scheduled messages'
	// time forward.
	clock         apitest.Clock
	keys          = stack.NewKeys()
	encryptionKey = seal.NewKey()
	// svc is messaging-svc as its own process (kill_test.go), started by the test that kills it.
	svc    *proc.Service
	client = &http.Client{Timeout: 30 * time.Second}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if catcher, err = smtpcatcher.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer catcher.Close()
	tmp, err := os.MkdirTemp("", "messaging-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// The current code of messaging-svc, built from the workspace (go.work).
	bin, addr, internal, err := proc.BuildService(tmp, "messaging-svc", "../../messaging-svc/cmd/messaging-svc")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, mongoDB, err = apitest.StartStack(ctx, stack.Options{
		Keys: keys, EncryptionKey: encryptionKey, AdminToken: adminToken,
		LogLevel: "error", OutboxLease: time.Second, PasswordCost: 4, RateLimitRPS: 1000, RateLimitBurst: 5000,
		Messaging: func(c *messaging.Config) {
			c.SMTPHost, c.SMTPPort, c.SMTPUsername = catcher.Host(), catcher.Port(), catcher.Username()
			c.SMTPPassword, c.SMTPTLS = config.Secret(catcher.Password()), "none"
			c.From, c.Domain = operatorName+" <"+operatorAddress+">", domain
			c.Rate, c.Lease, c.Poll = rate, lease, poll
			c.Clock = clock.Now
		},
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
	svc = &proc.Service{Name: "messaging-svc", Bin: bin, LogPath: filepath.Join(tmp, "messaging-svc.log"),
		InternalURL: "http://" + internal, Env: append(append(proc.WithoutVROS(os.Environ()),
			// libs/config's variables (config.Common) and messaging-svc's own, as the stack's
			// has them but the clock (the real one: the kill test does not move it).
			"VROS_MONGO_URI="+st.MongoURI,
			"VROS_KAFKA_BROKERS="+strings.Join(st.KafkaBrokers, ","),
			"VROS_LOG_LEVEL=warn",
			"VROS_INTERNAL_ADDR="+internal,
			"VROS_MESSAGING_ADDR="+addr,
			"VROS_ENCRYPTION_KEY="+encryptionKey,
			"VROS_MESSAGING_BOOKING_URL="+st.BookingURL,
			"VROS_MESSAGING_CONSUMER_GROUP=messaging-svc",
			"VROS_MESSAGING_SMTP_HOST="+catcher.Host(),
			"VROS_MESSAGING_SMTP_PORT="+strconv.Itoa(catcher.Port()),
			"VROS_MESSAGING_SMTP_USERNAME="+catcher.Username(),
			"VROS_MESSAGING_SMTP_PASSWORD="+catcher.Password(),
			"VROS_MESSAGING_SMTP_TLS=none",
			"VROS_MESSAGING_FROM="+operatorName+" <"+operatorAddress+">",
			"VROS_MESSAGING_DOMAIN="+domain,
			"VROS_MESSAGING_RATE="+strconv.Itoa(rate),
			"VROS_MESSAGING_LEASE="+lease.String(),
			"VROS_MESSAGING_POLL="+poll.String(),
		), stack.KeyEnv(keys, "messaging-svc")...)}
	defer svc.Kill() // no process left behind, whatever happened
	// Every exchange through edge is checked against the OpenAPI documents (edge/openapi),
	// the messaging resources' included.
	contract, err := apitest.NewContract(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if u, err := url.Parse(st.EdgeURL); err == nil {
		contract.Host = u.Host
	}
	client.Transport = contract
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
