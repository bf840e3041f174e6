// Package service wires booking-svc: what cmd/booking-svc runs and what the dev launcher
// and the end-to-end tests start in process.
package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vros/vros/booking-svc/internal/api"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/cardpay"
	"github.com/vros/vros/booking-svc/internal/cardpay/route"
	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/booking-svc/internal/erasure/consumer"
	"github.com/vros/vros/booking-svc/internal/erasure/erasurestore"
	"github.com/vros/vros/booking-svc/internal/feedsync"
	"github.com/vros/vros/booking-svc/internal/idempotency"
	"github.com/vros/vros/booking-svc/internal/journal"
	journalevents "github.com/vros/vros/booking-svc/internal/journal/consumer"
	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/booking-svc/internal/ledger/nightstore"
	"github.com/vros/vros/booking-svc/internal/owners"
	"github.com/vros/vros/booking-svc/internal/owners/ownerstore"
	"github.com/vros/vros/booking-svc/internal/propertyview"
	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/booking-svc/internal/store"
	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/outbox"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
)

// Config is booking-svc's configuration (VROS_BOOKING_… plus the common variables).
type Config struct {
	config.Common
	Addr          string        `env:"VROS_BOOKING_ADDR" envDefault:":8082"`
	EncryptionKey config.Secret `env:"VROS_ENCRYPTION_KEY"`
	// PasswordCost is bcrypt's work factor for guest passwords.
	PasswordCost int `env:"VROS_BOOKING_PASSWORD_COST" envDefault:"12"`
	// OutboxLease is how long a write owns its pending event before the sweep takes over.
	OutboxLease time.Duration `env:"VROS_BOOKING_OUTBOX_LEASE" envDefault:"10s"`
	// RequestDeadline bounds every booking change (and every request with an
	// Idempotency-Key): past it a change stops before it commits.
	RequestDeadline time.Duration `env:"VROS_BOOKING_REQUEST_DEADLINE" envDefault:"25s"`
	// JanitorLease is how old an unfinished change of the ledger must be before the janitor
	// repairs it; at least twice RequestDeadline, so that the change has stopped for sure.
	JanitorLease time.Duration `env:"VROS_BOOKING_JANITOR_LEASE" envDefault:"2m"`
	// IdempotencyLease is how long a request owns its Idempotency-Key; a retry after it
	// takes the key over if the request never answered. At least twice RequestDeadline.
	IdempotencyLease time.Duration `env:"VROS_BOOKING_IDEMPOTENCY_LEASE" envDefault:"1m"`
	// CheckoutWindow is how long a booking engine's checkout holds its nights before the
	// janitor expires it; at least JanitorLease, so that the janitor can repair a checkout
	// whose request stopped (a crash) before its window ends.
	CheckoutWindow time.Duration `env:"VROS_BOOKING_CHECKOUT_WINDOW" envDefault:"15m"`
	// FailedRetention is how long a failed booking attempt (its dates taken, its card
	// declined, its request stopped) is kept, without its card, before it is deleted.
	FailedRetention time.Duration `env:"VROS_BOOKING_FAILED_RETENTION" envDefault:"168h"`
	// ConsumerGroup is empty by default: each replica then reads every partition in its own
	// group, booking-svc-<hostname>, because each caches the property view in memory.
	ConsumerGroup string `env:"VROS_BOOKING_CONSUMER_GROUP"`
	// PropertyURL is property-svc, which keeps the payment methods' secret keys: a live
	// account's card charge reads its property's Stripe key there.
	PropertyURL string `env:"VROS_BOOKING_PROPERTY_URL" envDefault:"http://127.0.0.1:8081"`
	// StripeAPIURL is where Stripe charges go (stripe-mock in tests).
	StripeAPIURL string `env:"VROS_BOOKING_STRIPE_API_URL" envDefault:"https://api.stripe.com"`
	// AutopayInterval is how often the installments of paymentAuto bookings are charged.
	AutopayInterval time.Duration `env:"VROS_BOOKING_AUTOPAY_INTERVAL" envDefault:"10m"`
	// MoneyInterval is how often the money worker attempts the refunds due and runs the
	// deposit steps due (docs/money.md); 0: 30 s.
	MoneyInterval time.Duration `env:"VROS_BOOKING_MONEY_INTERVAL" envDefault:"30s"`
	// RefundRetrySchedule is the wait before each retry of a refund part whose attempt failed
	// ("": booking.DefaultRefundRetry); checked at start.
	RefundRetrySchedule string `env:"VROS_BOOKING_REFUND_RETRY_SCHEDULE" envDefault:"1m,5m,30m,2h,12h"`
	// DepositReleaseDays is how many days after check-out a held deposit is released;
	// DepositReauthorizeAfter the age at which a hold is renewed (card networks let a hold
	// lapse after 7 days).
	DepositReleaseDays      int           `env:"VROS_BOOKING_DEPOSIT_RELEASE_DAYS" envDefault:"7"`
	DepositReauthorizeAfter time.Duration `env:"VROS_BOOKING_DEPOSIT_REAUTHORIZE_AFTER" envDefault:"144h"`
	// OwnerFeeInterval is how often the monthly fee pass runs: it touches the current month's
	// fee source of every agreement in force on its 1st (docs/money.md), idempotent.
	OwnerFeeInterval time.Duration `env:"VROS_BOOKING_OWNER_FEE_INTERVAL" envDefault:"1h"`
	// Crash is a fault-injection hook for tests (booking.Service.Crash, feedsync.Syncer.Crash);
	// never set from the environment, nil in production.
	Crash func(step, account string)
	// Clock is the bookings' clock for tests (booking.Service.SetClock: a checkout's window,
	// today for quotes and automatic payments); never set from the environment, time.Now
	// when nil.
	Clock func() time.Time
}

// check refuses timings under which a repair could touch a change still running.
func (cfg Config) check() error {
	d := cfg.RequestDeadline
	switch {
	case d <= 0:
		return errors.New("VROS_BOOKING_REQUEST_DEADLINE must be positive")
	case cfg.JanitorLease < 2*d:
		return fmt.Errorf("VROS_BOOKING_JANITOR_LEASE (%v) must be at least twice VROS_BOOKING_REQUEST_DEADLINE (%v): it must outlast any request", cfg.JanitorLease, d)
	case cfg.IdempotencyLease < 2*d:
		return fmt.Errorf("VROS_BOOKING_IDEMPOTENCY_LEASE (%v) must be at least twice VROS_BOOKING_REQUEST_DEADLINE (%v): it must outlast any request", cfg.IdempotencyLease, d)
	case cfg.FailedRetention <= 0:
		return errors.New("VROS_BOOKING_FAILED_RETENTION must be positive")
	case cfg.MoneyInterval < 0:
		return errors.New("VROS_BOOKING_MONEY_INTERVAL must not be negative")
	case cfg.DepositReleaseDays < 0 || cfg.DepositReleaseDays > 365:
		return fmt.Errorf("VROS_BOOKING_DEPOSIT_RELEASE_DAYS (%d) must be 0 to 365", cfg.DepositReleaseDays)
	case cfg.DepositReauthorizeAfter < time.Hour || cfg.DepositReauthorizeAfter > 7*24*time.Hour:
		return fmt.Errorf("VROS_BOOKING_DEPOSIT_REAUTHORIZE_AFTER (%v) must be 1h to 168h: card networks let a hold lapse after 7 days", cfg.DepositReauthorizeAfter)
	case cfg.CheckoutWindow < cfg.JanitorLease:
		return fmt.Errorf("VROS_BOOKING_CHECKOUT_WINDOW (%v) must be at least VROS_BOOKING_JANITOR_LEASE (%v): a checkout whose request stopped is repaired after the lease, and must not hold its nights past its window", cfg.CheckoutWindow, cfg.JanitorLease)
	}
	if _, err := refundRetry(cfg.RefundRetrySchedule); err != nil {
		return err
	}
	return nil
}

// Database is booking-svc's MongoDB database.
const Database = "vros_booking"

// Run serves booking-svc until ctx ends. ready, when set, receives the listening address.
func Run(ctx context.Context, cfg Config, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.CheckoutWindow == 0 { // a Config built in code (devstack) without the window
		cfg.CheckoutWindow = booking.DefaultCheckoutWindow
	}
	if cfg.DepositReauthorizeAfter == 0 && cfg.DepositReleaseDays == 0 { // a Config built in code without them
		cfg.DepositReleaseDays, cfg.DepositReauthorizeAfter = booking.DefaultDepositReleaseDays, booking.DefaultDepositReauthorizeAfter
	}
	if err := cfg.check(); err != nil {
		return err
	}
	// edge calls every route, integration-svc its hooks and iCal routes, messaging-svc its
	// booking read; booking-svc signs its calls to property-svc with its own key
	// (docs/internal-auth.md).
	if err := cfg.InternalKeys.Require(config.KeyEdge, config.KeyIntegration, config.KeyMessaging, config.KeyBooking); err != nil {
		return err
	}
	auth, err := tenancy.NewVerifier([]tenancy.Grant{
		{Caller: tenancy.CallerEdge, Key: cfg.InternalKeys.Edge.Reveal()},
		{Caller: tenancy.CallerIntegration, Key: cfg.InternalKeys.Integration.Reveal(), Routes: api.IntegrationRoutes},
		{Caller: tenancy.CallerMessaging, Key: cfg.InternalKeys.Messaging.Reveal(), Routes: api.MessagingRoutes},
	})
	if err != nil {
		return err
	}
	group, err := events.ReplicaGroup(cfg.ConsumerGroup, "booking-svc")
	if err != nil {
		return err
	}
	box, err := seal.New(cfg.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("VROS_ENCRYPTION_KEY: %w", err)
	}
	base, err := daemon.Open(ctx, "booking-svc", cfg.Common, Database)
	if err != nil {
		return err
	}
	defer base.Close()
	tel, db, log := base.Tel, base.DB, base.Tel.Logger
	st, err := store.New(ctx, db)
	if err != nil {
		return err
	}
	nights, err := nightstore.New(ctx, db)
	if err != nil {
		return err
	}
	led := ledger.New(nights)
	led.Instrument(tel.Meter)
	vw, err := propertyview.New(ctx, db)
	if err != nil {
		return err
	}
	keys, err := idempotency.New(ctx, db)
	if err != nil {
		return err
	}
	stmts, err := store.NewStatements(ctx, db)
	if err != nil {
		return err
	}
	marks, err := erasurestore.NewMarks(ctx, db)
	if err != nil {
		return err
	}
	st.WatchErasures(marks)
	vw.IgnoreErased(marks.Is)
	keys.Deadline, keys.Lease = cfg.RequestDeadline, cfg.IdempotencyLease
	keys.Instrument(tel.Meter)
	if err := mongostore.Ensure(ctx, db, []string{events.ParkedCollection}, nil); err != nil {
		return err
	}
	// The produce of each event is a span of the write that caused it (docs/tracing.md).
	pub := events.NewPublisherWith(cfg.KafkaBrokers, events.PublisherOptions{Meter: tel.Meter, Tracer: tel.Tracer, Propagator: tel.Propagator})
	defer func() { _ = pub.Close() }()
	ob := outbox.New(db, pub, st.Snapshot, outbox.Options{Lease: cfg.OutboxLease, Meter: tel.Meter, Log: log, Propagator: tel.Propagator})
	st.Attach(ob)

	payments := cardpay.NewPayments(tel.Meter)
	// The Router charges cards (the test gateway, or the property's Stripe) and makes the
	// booking engine's PaymentIntents in the property's Stripe.
	gateway := cardGateway(cfg, payments)
	bookings := booking.New(booking.Deps{PropertyView: propertyview.NewReader(vw), Bookings: st, Blocks: st, Users: st, Accounts: st, Ledger: led,
		Gateway: gateway, Intents: gateway, Checkouts: st, Channel: st, Box: box, Payments: payments})
	bookings.Deadline, bookings.Lease, bookings.Crash = cfg.RequestDeadline, cfg.JanitorLease, cfg.Crash
	bookings.CheckoutWindow = cfg.CheckoutWindow
	if bookings.RefundRetry, err = refundRetry(cfg.RefundRetrySchedule); err != nil {
		return err
	}
	bookings.SetDepositTimes(cfg.DepositReleaseDays, cfg.DepositReauthorizeAfter)
	if cfg.Clock != nil {
		bookings.SetClock(cfg.Clock)
	}
	ownerRecords, err := ownerstore.New(ctx, db)
	if err != nil {
		return err
	}
	// Owners, agreements, expenses and payouts (docs/money.md, section 3).
	ownerBooks := owners.New(ownerRecords, propertyview.NewReader(vw), box)
	ownerBooks.SetLogger(log)
	if cfg.Clock != nil {
		ownerBooks.SetClock(cfg.Clock)
	}
	feeds := feedsync.New(feedsync.Deps{PropertyView: propertyview.NewReader(vw), Blocks: st, Ledger: led, Current: bookings.Current})
	feeds.Deadline, feeds.Crash = cfg.RequestDeadline, cfg.Crash
	// The ledger (docs/money.md, "The ledger"): each booking event touches its booking's
	// entries; the repair pass finishes a touch a crash stopped.
	jst, err := store.NewJournal(ctx, db)
	if err != nil {
		return err
	}
	books := journal.New(jst)
	books.Log, books.Erased = log, marks.Is
	books.Register("booking", journal.BookingResolver(st, ownerBooks))
	// Expenses, payouts and monthly fees post from the owners' records.
	for kind, r := range ownerBooks.Resolvers() {
		books.Register(kind, r)
	}
	ownerBooks.SetJournal(books)
	ownerBooks.SetBookings(st)
	eraser := &erasure.Eraser{Marks: marks, View: erasure.Part{Name: "property view", Erase: vw.EraseAccount}, Forget: vw.ForgetAccount,
		Parts: []erasure.Part{
			{Name: "bookings", Erase: st.EraseAccount},
			{Name: "ledger", Erase: nights.EraseAccount},
			{Name: "journal", Erase: jst.EraseAccount},
			{Name: "idempotency keys", Erase: keys.EraseAccount},
			{Name: "owner statements", Erase: stmts.EraseAccount},
			{Name: "owners", Erase: ownerRecords.EraseAccount},
			erasurestore.ParkedEvents(db.Collection(events.ParkedCollection)),
		},
		Settle: cfg.JanitorLease, Log: log}
	// vros.property.v1 carries the property view's snapshots and the accounts' erasures.
	propertyEvents := &consumer.Handler{Eraser: eraser, Next: vw.Apply}
	janitor := booking.Janitor{Bookings: bookings, Lease: cfg.JanitorLease, Retention: cfg.FailedRetention,
		Sweeps: map[string]func(context.Context) error{"idempotency expiry": keys.Expire, "account erasure": eraser.Sweep}, Log: log,
		Meter: tel.Meter}
	autopay := booking.Autopay{Bookings: bookings, Interval: cfg.AutopayInterval, Log: log}
	money := booking.Money{Bookings: bookings, Interval: cfg.MoneyInterval, Log: log}
	app := httpapi.New(httpapi.Options{
		Telemetry: tel,
		// An owner expense's receipt (5 MiB, as base64 in JSON) is the largest body: edge
		// bounds /api/owner-expense at 8 MiB and every other route lower.
		BodyLimit: 9 << 20,
		Ready:     base.Ready,
	})
	routes := api.New(bookings, feeds, booking.NewUsers(st, cfg.PasswordCost), keys)
	routes.Instrument(tel.Meter)
	routes.RefuseErased(marks.Known)
	routes.SetLogger(log)
	// Owner statements (docs/money.md, "Statements"), read from the ledger's entries.
	routes.SetStatements(&statement.Service{Ledger: books, Store: stmts, Owners: ownerBooks.OwnerName,
		Stays: bookingStays(st)})
	routes.SetLedger(books)
	routes.SetOwners(ownerBooks)
	routes.Register(app, auth)

	log.Info("booking-svc starting", "addr", cfg.Addr)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return events.Consume(gctx, events.ConsumerOptions{
			Brokers: cfg.KafkaBrokers, GroupID: group, Topics: []string{events.TopicProperty},
			Park: events.ParkIn(db.Collection(events.ParkedCollection)), Log: log, Tracer: tel.Tracer, Meter: tel.Meter,
			Propagator: tel.Propagator,
		}, propertyEvents.Apply)
	})
	g.Go(func() error {
		return events.Consume(gctx, events.ConsumerOptions{
			Brokers: cfg.KafkaBrokers, GroupID: journalevents.ConsumerGroup, Topics: []string{events.TopicBooking},
			Park: events.ParkIn(db.Collection(events.ParkedCollection)), Log: log, Tracer: tel.Tracer, Meter: tel.Meter,
			Propagator: tel.Propagator,
		}, journalevents.ApplyBookingEvent(books))
	})
	g.Go(func() error { return books.Run(gctx, time.Minute) })
	g.Go(func() error { return janitor.Run(gctx) })
	g.Go(func() error { return autopay.Run(gctx) })
	g.Go(func() error { return money.Run(gctx) })
	if cfg.OwnerFeeInterval > 0 {
		g.Go(func() error { return ownerBooks.RunFees(gctx, cfg.OwnerFeeInterval) })
	}
	g.Go(func() error {
		return ob.Serve(func() error { return httpapi.Serve(gctx, app, cfg.Addr, ready, cfg.ShutdownDrain, 10*time.Second) }, 5*time.Second)
	})
	return g.Wait()
}

// refundRetry is VROS_BOOKING_REFUND_RETRY_SCHEDULE read ("": the default).
func refundRetry(schedule string) ([]time.Duration, error) {
	if strings.TrimSpace(schedule) == "" {
		return nil, nil
	}
	d, err := booking.ParseRetrySchedule(schedule)
	if err != nil {
		return nil, fmt.Errorf("VROS_BOOKING_REFUND_RETRY_SCHEDULE: %w", err)
	}
	return d, nil
}

// cardGateway routes each charge: sandbox accounts to the test gateway, live ones to their
// property's Stripe account (docs/booking.md, "Card gateways"), counting each in payments.
func cardGateway(cfg Config, payments *cardpay.Payments) *route.Router {
	client := &http.Client{Timeout: 15 * time.Second}
	return &route.Router{
		Test:      cardpay.NewTest(time.Now),
		Methods:   route.PropertyMethods{URL: cfg.PropertyURL, Signer: tenancy.NewSigner(tenancy.CallerBooking, cfg.InternalKeys.Booking.Reveal()), Client: client},
		StripeURL: cfg.StripeAPIURL, HTTP: client, Payments: payments,
	}
}

// bookingStays is what owner statements show of a booking: its property, stay, channel and
// status, read from the booking.
func bookingStays(st *store.Store) statement.Stays {
	return func(ctx context.Context, account string, id int64) (statement.Stay, bool, error) {
		b, err := st.Booking(ctx, account, id)
		if errors.Is(err, booking.ErrNotFound) {
			return statement.Stay{}, false, nil
		}
		if err != nil {
			return statement.Stay{}, false, err
		}
		return statement.Stay{PropertyName: b.PropertyName, Checkin: b.Checkin, Checkout: b.Checkout,
			Channel: cmp.Or(b.Channel, "direct"), Status: b.Status}, true, nil
	}
}
