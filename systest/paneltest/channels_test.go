package paneltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/systest/browser"
	"github.com/vros/vros/testkit/fakechannex"
)

// apiConnection, apiMapping and apiConflict are what /api/channel-connection,
// /api/channel-mapping and /api/channel-conflict answer (docs/channels.md).
type apiConnection struct {
	ID       int64  `json:"connection_id"`
	Adapter  string `json:"adapter"`
	Endpoint string `json:"endpoint"`
	Channel  string `json:"channel"`
	Enabled  bool   `json:"enabled"`
	Days     int    `json:"days"`
}

type apiMapping struct {
	ConnectionID     int64  `json:"connection_id"`
	PropertyID       int64  `json:"property_id"`
	InternalCode     string `json:"internal_code"`
	RemotePropertyID string `json:"remote_property_id"`
	RoomTypeID       string `json:"room_type_id"`
	RatePlans        []struct {
		RatePlanID       int64  `json:"rate_plan_id"`
		RemoteRatePlanID string `json:"remote_rate_plan_id"`
	} `json:"rate_plans"`
	Enabled bool `json:"enabled"`
}

type apiConflict struct {
	ID            int64  `json:"conflict_id"`
	ReservationID string `json:"reservation_id"`
	Reason        string `json:"reason"`
	ResolvedAt    string `json:"resolved_at"`
	Note          string `json:"note"`
}

func (o owner) connections(t *testing.T) []apiConnection {
	t.Helper()
	var ans struct {
		Data struct {
			Connections []apiConnection `json:"connections"`
		} `json:"data"`
	}
	o.a(t, "channel-connection", `{"action":"list"}`, &ans)
	return ans.Data.Connections
}

func (o owner) mappings(t *testing.T, connection int64) []apiMapping {
	t.Helper()
	var ans struct {
		Data struct {
			Mappings []apiMapping `json:"mappings"`
		} `json:"data"`
	}
	o.a(t, "channel-mapping", fmt.Sprintf(`{"action":"list","mapping":{"connection_id":%d}}`, connection), &ans)
	return ans.Data.Mappings
}

func (o owner) conflicts(t *testing.T) []apiConflict {
	t.Helper()
	var ans struct {
		Data struct {
			Conflicts []apiConflict `json:"conflicts"`
		} `json:"data"`
	}
	o.a(t, "channel-conflict", `{"action":"list"}`, &ans)
	return ans.Data.Conflicts
}

// waitURL waits until the tab's address contains part (a page htmx swapped in after a form:
// the elements of the page before may match what the test looks for next).
func (p *page) waitURL(part string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		loc, err := chromedp.Run(p.ctx, chromedp.Location())
		if err == nil && strings.Contains(loc, part) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the address is %s (%v), want it to contain %s", loc, err, part)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setByID sets fields by their element id (a page repeating a form names its fields alike).
func (p *page) setByID(kv ...string) {
	p.t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			p.do(chromedp.Clear(chromedp.CSS("#" + kv[i])))
			continue
		}
		p.do(chromedp.SetValue(chromedp.CSS("#"+kv[i]), kv[i+1]))
	}
}

// channelOwner is an owner whose property has two rate plans (the standard and a derived
// one), whose account may name loopback endpoints, and a fake Channex with a property of one
// room type and two rate plans for its key.
type channelOwner struct {
	owner
	fake *fakechannex.Server
	key  string
	prop fakechannex.Property
}

func newChannelOwner(t *testing.T) channelOwner {
	t.Helper()
	o := newOwner(t)
	if err := apitestAllowPrivate(o.AccountID); err != nil {
		t.Fatal(err)
	}
	o.a(t, "property-rateplan", fmt.Sprintf(`{"action":"create","internal_code":%q,"rate_plan":{"name":"Non-refundable",`+
		`"adjustment":{"type":"percent","value":"-10"},"cancellation":{"policy":"non_refundable"},"sold_on":{"direct":true,"channels":["channex"]}}}`, o.Code), nil)
	// A mapping names its property by code, which integration-svc looks up in booking-svc,
	// whose view follows the property's events: wait until it has the property (the same
	// lookup, by a read: ical-feed's list of the property's feeds).
	deadline := time.Now().Add(viewsWithin)
	for {
		err := apitest.PostA(http.DefaultClient, o.Account, "ical-feed", fmt.Sprintf(`{"action":"list","feed":{"internal_code":%q}}`, o.Code), nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("booking-svc does not know property %s: %v", o.Code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fake := fakechannex.Start(t)
	key := "vros-panel-" + o.AccountID
	fake.AddKey(key)
	prop := fake.AddProperty(key, fakechannex.Property{Title: o.Name, Currency: "EUR",
		RoomTypes: []fakechannex.RoomType{{Title: "Whole villa", RatePlans: []string{fakechannex.NewID(), fakechannex.NewID()}}}})
	return channelOwner{owner: o, fake: fake, key: key, prop: prop}
}

// signInBrowser opens a browser signed in as o.
func signInBrowser(t *testing.T, o owner) *page {
	t.Helper()
	p := &page{t: t, ctx: browser.Start(t), dir: shots(t)}
	p.open("/panel/login")
	p.fill("email", o.Email, "password", o.Password)
	p.press("Sign in")
	p.expect("h1", "Dashboard")
	return p
}

// addConnection adds a Channex connection to the fake on the Channels page (a mistake the
// panel sees and one the service refuses first, each shown at its field) and answers its id and inbound URL, as the page showed it once.
func addConnection(t *testing.T, p *page, co channelOwner) (int64, string) {
	t.Helper()
	p.open("/panel/channels")
	p.expect("h1", "Channels")
	p.fill("connection[adapter]", "channex", "connection[endpoint]", co.fake.URL(), "connection[days]", "30")
	p.press("Add connection")
	p.expect("#f-connection-credentials-api_key-err", "is required")
	if n := len(co.connections(t)); n != 0 {
		t.Fatalf("%d connections after a refused form", n)
	}
	// The service's refusal, at its field: an endpoint that is not a URL it may call.
	p.fill("connection[credentials][api_key]", co.key, "connection[endpoint]", "ftp://"+strings.TrimPrefix(co.fake.URL(), "http://"))
	p.press("Add connection")
	p.expect("#f-connection-endpoint-err", "")
	if n := len(co.connections(t)); n != 0 {
		t.Fatalf("%d connections after a refused endpoint", n)
	}
	p.fill("connection[credentials][api_key]", co.key, "connection[endpoint]", co.fake.URL())
	p.press("Add connection")
	inbound := p.expect("#inbound-url", "/channels/channex/")
	conns := co.connections(t)
	if len(conns) != 1 || conns[0].Adapter != "channex" || conns[0].Endpoint != co.fake.URL() || !conns[0].Enabled || conns[0].Days != 30 ||
		conns[0].Channel != "channex" {
		t.Fatalf("connections after the create: %+v", conns)
	}
	id := conns[0].ID
	p.expect(fmt.Sprintf(`#connections tr[data-connection="%d"] .state`, id), "enabled")
	if strings.HasPrefix(inbound, "/") {
		inbound = st.EdgeURL + inbound
	}
	return id, inbound
}

// TestChannelPages: in Chromium, an owner adds a Channex connection pointing at the fake
// (a mistake the panel sees and one the service refuses first, each at its field), tests it,
// maps the property and its two rate plans (the same two kinds of mistake first),
// sees it listed, disables and enables the mapping, asks for a full sync, reads the log
// filtered by kind with a message's bodies, edits the connection, rotates its inbound URL,
// and deletes it after confirming. Each change is read back through the API.
func TestChannelPages(t *testing.T) {
	co := newChannelOwner(t)
	p := signInBrowser(t, co.owner)
	id, inbound := addConnection(t, p, co)
	p.shot("channels")

	// The test: one authenticated read of the fake.
	p.press(fmt.Sprintf("Test connection %d", id))
	p.expect("#test-answer", "accepted")
	if calls := co.fake.Calls(); len(calls) == 0 {
		t.Fatal("the test reached nothing")
	}

	// The mapping screen: every property a row, each plan an input.
	p.do(chromedp.Click(fmt.Sprintf(`//a[normalize-space()="Mapping of connection %d"]`, id)))
	p.expect("h1", "Mapping")
	row := "row-" + co.Code
	p.expect("#"+row+" .state", "Not mapped")
	rt := co.prop.RoomTypes[0]
	pre := "f-" + co.Code + "-mapping-"
	p.setByID(pre+"remote_property_id", co.prop.ID, pre+"rate_plans-0-remote_rate_plan_id", rt.RatePlans[0],
		pre+"rate_plans-1-remote_rate_plan_id", rt.RatePlans[1])
	p.press("Save the mapping of " + co.Code)
	p.expect("#"+pre+"room_type_id-err", "is required")
	if n := len(co.mappings(t, id)); n != 0 {
		t.Fatalf("%d mappings after a refused form", n)
	}
	// The service's refusal of the second plan sent alone (plan 1, its remote id too long),
	// shown at plan 1's input.
	p.setByID(pre+"room_type_id", rt.ID, pre+"rate_plans-0-remote_rate_plan_id", "", pre+"rate_plans-1-remote_rate_plan_id", strings.Repeat("x", 101))
	p.press("Save the mapping of " + co.Code)
	p.expect("#"+pre+"rate_plans-1-remote_rate_plan_id-err", "")
	if n := len(co.mappings(t, id)); n != 0 {
		t.Fatalf("%d mappings after a refused plan", n)
	}
	p.setByID(pre+"rate_plans-0-remote_rate_plan_id", rt.RatePlans[0], pre+"rate_plans-1-remote_rate_plan_id", rt.RatePlans[1])
	p.press("Save the mapping of " + co.Code)
	p.expect(".notice", "Saved.")
	p.expect("#"+row+" .state", "Mapped, enabled")
	p.shot("channel-mapping")
	maps := co.mappings(t, id)
	if len(maps) != 1 || maps[0].InternalCode != co.Code || maps[0].RemotePropertyID != co.prop.ID || maps[0].RoomTypeID != rt.ID ||
		!maps[0].Enabled || len(maps[0].RatePlans) != 2 || maps[0].RatePlans[0].RatePlanID != 0 || maps[0].RatePlans[0].RemoteRatePlanID != rt.RatePlans[0] ||
		maps[0].RatePlans[1].RatePlanID != 1 || maps[0].RatePlans[1].RemoteRatePlanID != rt.RatePlans[1] {
		t.Fatalf("mappings after the save: %+v", maps)
	}
	// Disable, enable, a full sync.
	p.press("Disable the mapping of " + co.Code)
	p.expect(".notice", "Disabled.")
	p.expect("#"+row+" .state", "disabled")
	if m := co.mappings(t, id); len(m) != 1 || m[0].Enabled {
		t.Fatalf("mapping after disable: %+v", m)
	}
	p.press("Enable the mapping of " + co.Code)
	p.expect(".notice", "Enabled.")
	p.press("Full sync of " + co.Code)
	p.expect(".notice", "full sync")

	// Listed on the connections page.
	p.open("/panel/channels")
	p.expect(fmt.Sprintf(`#connections tr[data-connection="%d"] .mapped`, id), "1")

	// The log: the test's message; filtered by kind; its bodies open.
	p.open("/panel/channels/log")
	p.expect("#log tr.entry", "")
	p.fill("kind", "test")
	p.press("Filter")
	p.waitURL("kind=test")
	p.expect(`#log tr.entry[data-kind="test"]`, "test")
	if n := p.count(`#log tr.entry:not([data-kind="test"])`); n != 0 {
		t.Fatalf("%d entries of another kind with kind=test", n)
	}
	p.do(chromedp.Click(`#log tr.bodies summary`))
	p.expect("#log tr.bodies pre.body", "")
	p.shot("channel-log")
	p.fill("kind", "ack")
	p.press("Filter")
	p.waitURL("kind=ack")
	p.expect("#log tbody", "No message matches.")

	// Edit: fewer days, a new key.
	p.open(fmt.Sprintf("/panel/channels?edit=%d", id))
	p.expect("#connection", fmt.Sprintf("Edit connection %d", id))
	p.fill("connection[days]", "60", "connection[channel]", "airbnb")
	p.press("Save connection")
	p.expect(".notice", "Saved.")
	if c := co.connections(t); len(c) != 1 || c[0].Days != 60 || c[0].Channel != "airbnb" || c[0].Endpoint != co.fake.URL() {
		t.Fatalf("connection after the edit: %+v", c)
	}

	// A new inbound URL: shown once, the old one refused from then on.
	p.press(fmt.Sprintf("New inbound URL of connection %d", id))
	rotated := p.expect("#inbound-url", "/channels/channex/")
	if strings.HasSuffix(inbound, rotated) || rotated == inbound {
		t.Fatalf("the inbound URL did not change: %s", rotated)
	}
	p.open("/panel/channels")
	if n := p.count("#inbound-url"); n != 0 {
		t.Fatal("the inbound URL is shown again")
	}

	// Disable, then delete after confirming.
	p.press(fmt.Sprintf("Disable connection %d", id))
	p.expect(".notice", "Disabled.")
	if c := co.connections(t); len(c) != 1 || c[0].Enabled {
		t.Fatalf("connection after disable: %+v", c)
	}
	p.press(fmt.Sprintf("Delete connection %d", id))
	p.expect("#confirm-delete", fmt.Sprintf("Delete connection %d", id))
	if n := len(co.connections(t)); n != 1 {
		t.Fatal("deleted before the confirmation")
	}
	p.press(fmt.Sprintf("Yes, delete connection %d", id))
	p.expect(".notice", "Deleted.")
	if n := len(co.connections(t)); n != 0 {
		t.Fatalf("%d connections after the delete", n)
	}

	// An OpenTravel connection: choosing the adapter shows its own credentials only, and
	// those are what is sent.
	p.open("/panel/channels")
	p.do(chromedp.SetValue(chromedp.CSS("#f-connection-adapter"), "opentravel"))
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](
		`document.querySelector("#f-connection-adapter").dispatchEvent(new Event("change", {bubbles: true}))`)); err != nil {
		t.Fatal(err)
	}
	p.waitCount(`fieldset[data-adapter="channex"][hidden]`, 1)
	p.waitCount(`fieldset[data-adapter="opentravel"]:not([hidden])`, 1)
	p.fill("connection[endpoint]", co.fake.URL()+"/pmsxchange", "connection[credentials][username]", "vros-pms",
		"connection[credentials][password]", "a long pass phrase")
	p.press("Add connection")
	p.expect("#inbound-url", "/channels/opentravel/")
	if c := co.connections(t); len(c) != 1 || c[0].Adapter != "opentravel" || c[0].Channel != "opentravel" || c[0].Days != 500 {
		t.Fatalf("the OpenTravel connection: %+v", c)
	}
}

// TestChannelConflictsPage: a channel reservation of nights booked directly first arrives
// through the real path (the fake's revisions feed, pulled on Channex's webhook to the
// connection's inbound URL) and becomes a conflict; the conflicts page shows it open with
// the booking holding the nights, and the owner resolves it with a note, read back through
// the API.
func TestChannelConflictsPage(t *testing.T) {
	co := newChannelOwner(t)
	booked := co.book(t, day(40), day(43))
	p := signInBrowser(t, co.owner)
	id, inbound := addConnection(t, p, co)
	rt := co.prop.RoomTypes[0]
	co.a(t, "channel-mapping", fmt.Sprintf(`{"action":"create","mapping":{"connection_id":%d,"internal_code":%q,"remote_property_id":%q,`+
		`"room_type_id":%q,"rate_plans":[{"rate_plan_id":0,"remote_rate_plan_id":%q}],"enabled":true}}`, id, co.Code, co.prop.ID, rt.ID, rt.RatePlans[0]), nil)

	rev := co.fake.EnqueueRevision(fakechannex.Revision{PropertyID: co.prop.ID, ArrivalDate: day(41), DepartureDate: day(44), Amount: "450.00",
		Customer: fakechannex.Customer{Name: "Grace", Surname: "Hopper", Mail: "grace@example.com", Country: "US"}})
	ctx, cancel := context.WithTimeout(context.Background(), viewsWithin)
	defer cancel()
	if code, body, err := co.fake.PostWebhook(ctx, inbound, "booking", rev.ID); err != nil || code != http.StatusOK {
		t.Fatalf("webhook: %v %d %s", err, code, body)
	}
	// The revision is acknowledged once the conflict is recorded.
	if err := co.fake.Wait(ctx, func() bool {
		for _, a := range co.fake.Acks() {
			if a.RevisionID == rev.ID {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("the revision was not acknowledged: %v", err)
	}
	var cf apiConflict
	for _, c := range co.conflicts(t) {
		if c.ReservationID != "" {
			cf = c
		}
	}
	if cf.ID == 0 || cf.Reason != "nights_taken" || cf.ResolvedAt != "" {
		t.Fatalf("conflicts: %+v", co.conflicts(t))
	}

	// The connections page counts it; the conflicts page shows it.
	p.open("/panel/channels")
	p.expect(fmt.Sprintf(`#connections tr[data-connection="%d"] .open`, id), "1")
	p.open("/panel/channels/conflicts")
	crow := fmt.Sprintf(`#conflicts tr.conflict[data-conflict="%d"]`, cf.ID)
	p.expect(crow+`[data-open="yes"]`, "nights_taken")
	got := p.text(crow)
	for _, want := range []string{cf.ReservationID, "BookingCom", co.Code, day(44), fmt.Sprint(booked), "Grace Hopper", "450.00 EUR", day(41), day(42)} {
		if !strings.Contains(got, want) {
			t.Errorf("the conflict's row lacks %q: %s", want, got)
		}
	}
	p.shot("channel-conflicts")
	p.setByID(fmt.Sprintf("f-c%d-conflict-note", cf.ID), "Guest moved to the sister villa")
	p.press(fmt.Sprintf("Resolve conflict %d", cf.ID))
	p.expect(".notice", "resolved")
	p.expect(crow+`[data-open="no"]`, "Guest moved to the sister villa")
	var after apiConflict
	for _, c := range co.conflicts(t) {
		if c.ID == cf.ID {
			after = c
		}
	}
	if after.ResolvedAt == "" || after.Note != "Guest moved to the sister villa" {
		t.Fatalf("the conflict after resolving: %+v", after)
	}
	if _, err := time.Parse(time.RFC3339Nano, after.ResolvedAt); err != nil {
		t.Fatalf("resolved_at %q: %v", after.ResolvedAt, err)
	}
	raw, _ := json.Marshal(p.seen)
	t.Logf("screenshots in %s: %s", p.dir, raw)
}
