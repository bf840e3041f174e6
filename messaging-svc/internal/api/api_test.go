package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields/fieldstest"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/template"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "messagingapi_test", &db, nil) }

const testKey = "messagingapi-test-key-0123"

// previewer answers template.Sample's data for the bookings it knows, with the guest's first
// name it was given; any other booking is not the account's.
type previewer struct {
	mu       sync.Mutex
	bookings map[string]string // "<account>:<booking>" → the guest's first name
}

func (p *previewer) add(account string, booking int64, guest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bookings[fmt.Sprintf("%s:%d", account, booking)] = guest
}

func (p *previewer) Data(_ context.Context, account string, booking int64, trig, lang string) (template.Data, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	guest, ok := p.bookings[fmt.Sprintf("%s:%d", account, booking)]
	if !ok {
		return template.Data{}, fmt.Errorf("booking-svc: %w", ErrNoBooking)
	}
	d := template.Sample(trig, lang)
	d.Guest.FirstName, d.Booking.ID = guest, booking
	return d, nil
}

// replanner records the accounts re-planned; fail makes it fail.
type replanner struct {
	mu       sync.Mutex
	accounts []string
	fail     error
}

func (r *replanner) Replan(_ context.Context, account string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.accounts = append(r.accounts, account)
	return nil
}

func (r *replanner) count(account string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.accounts {
		if a == account {
			n++
		}
	}
	return n
}

// tester accepts every address but those at bounce.example, as a server would.
type tester struct{}

func (tester) Test(_ context.Context, account, address string) (string, error) {
	if strings.HasSuffix(address, "@bounce.example") {
		return "", errors.New("smtp: RCPT TO: 550 5.1.1 no such user")
	}
	return "250 2.0.0 Ok: queued as " + account, nil
}

type env struct {
	app     *fiber.App
	deps    Deps
	preview *previewer
	replan  *replanner
}

var accounts atomic.Int64

// newAccount is an account of the test's own (tests also pass run again on one database).
func newAccount(name string) string {
	return fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano(), accounts.Add(1))
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{preview: &previewer{bookings: map[string]string{}}, replan: &replanner{}}
	e.deps = Deps{Box: box, Previewer: e.preview, Replanner: e.replan, Tester: tester{}}
	if e.deps.Templates, err = store.NewTemplates(ctx, db); err != nil {
		t.Fatal(err)
	}
	if e.deps.Settings, err = store.NewSettings(ctx, db); err != nil {
		t.Fatal(err)
	}
	if e.deps.Messages, err = store.NewMessages(ctx, db); err != nil {
		t.Fatal(err)
	}
	if e.deps.Suppressions, err = store.NewSuppressions(ctx, db); err != nil {
		t.Fatal(err)
	}
	views, err := store.NewViews(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := store.NewSnapshots(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Views, e.deps.Bookings = views, snaps
	e.app = newEnvWith(t, e.deps)
	return e
}

// newEnvWith is an app serving the resources over d.
func newEnvWith(t *testing.T, d Deps) *fiber.App {
	t.Helper()
	tel, err := telemetry.Setup(context.Background(), "messagingapi-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	New(d).Mount(app, tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerEdge, Key: testKey}))
	return app
}

// property and brand give the account a property and a brand (as vros.property.v1 does).
func (e *env) property(t *testing.T, account string, id int64) {
	t.Helper()
	if _, err := e.deps.Views.(*store.Views).SaveProperty(context.Background(), store.PropertyView{Account: account, ID: id, Name: "Villa", Version: 1}, false); err != nil {
		t.Fatal(err)
	}
}

func (e *env) brand(t *testing.T, account string, id int64) {
	t.Helper()
	if _, err := e.deps.Views.(*store.Views).SaveAccount(context.Background(), store.AccountView{Account: account, Languages: []string{"en"},
		Brands: []store.BrandView{{ID: id, Name: "Aurora"}}, Version: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
}

// booking makes booking id of the account one the previewer reads (guest: its first name),
// with a snapshot of its property and brand.
func (e *env) booking(t *testing.T, account string, id, property, brand int64, guest string) {
	t.Helper()
	e.preview.add(account, id, guest)
	b := contract.Booking{AccountID: account, BookingID: id, PropertyID: property, BrandID: brand, Status: "reserved", Version: 1,
		Checkin: "2027-06-10", Checkout: "2027-06-13", Currency: "EUR", TotalRent: "300", GrandTotal: "300"}
	if _, err := e.deps.Bookings.(*store.Snapshots).Save(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// call posts body to /internal/a/{resource} signed for account, and answers the HTTP code,
// the envelope decoded and the raw body.
func (e *env) call(t *testing.T, account, resource, body string) (int, map[string]any, string) {
	t.Helper()
	path := "/internal/a/" + resource
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: account}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, out, string(raw)
}

// ok calls and wants 200, answering data.
func (e *env) ok(t *testing.T, account, resource, body string) map[string]any {
	t.Helper()
	code, out, raw := e.call(t, account, resource, body)
	if code != 200 {
		t.Fatalf("%s %s: %d %s", resource, body, code, raw)
	}
	d, _ := out["data"].(map[string]any)
	return d
}

// refused calls and wants code with an error message containing msg.
func (e *env) refused(t *testing.T, account, resource, body string, code int, msg string) {
	t.Helper()
	got, out, raw := e.call(t, account, resource, body)
	if got != code || !strings.Contains(fmt.Sprint(out["error_message"]), msg) {
		t.Fatalf("%s %s: %d %s, want %d naming %q", resource, body, got, raw, code, msg)
	}
}

// violations lists the answer's violations, "field: message" a line.
func violations(out map[string]any) string {
	var list []string
	errs, _ := out["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		list = append(list, fmt.Sprint(m["field"], ": ", m["message"]))
	}
	return strings.Join(list, "\n")
}

type row struct {
	name  string
	want  string // the violations, "" for a 200
	edits []fieldstest.Edit
}

func set(path string, v any) fieldstest.Edit { return fieldstest.Set(path, v) }

// rows runs each row's edits of base against resource for a fresh account; prepare, when
// set, readies the account first. A refused row must change nothing the account lists.
func (e *env) rows(t *testing.T, resource, base string, prepare func(t *testing.T, account string), state func(t *testing.T, account string) string, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			acc := newAccount("rows")
			if prepare != nil {
				prepare(t, acc)
			}
			before := state(t, acc)
			body := string(fieldstest.Apply(t, base, r.edits...))
			code, out, raw := e.call(t, acc, resource, body)
			switch {
			case r.want == "" && code != 200:
				t.Fatalf("%d %s\nbody %s", code, raw, body)
			case r.want != "" && (code != 400 || violations(out) != r.want):
				t.Fatalf("%d %s\nwant 400 with\n%s\nbody %s", code, violations(out), r.want, body)
			}
			if r.want != "" {
				if after := state(t, acc); after != before {
					t.Fatalf("a refused request changed\n%s\ninto\n%s", before, after)
				}
			}
		})
	}
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }
