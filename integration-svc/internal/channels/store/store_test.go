package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/seal"
)

var db *mongo.Database

// TestMain gives the package one database and one Kafka broker (the conflicts' events): the
// embedded servers, or the real ones of `make test-real` (VROS_MONGO_URI, VROS_KAFKA_BROKERS).
func TestMain(m *testing.M) { runWithServers(m, "channelstore_test") }

var box = func() *seal.Box {
	b, err := seal.New(seal.NewKey())
	if err != nil {
		panic(err)
	}
	return b
}()

func open(t *testing.T) *Stores {
	t.Helper()
	s, err := Open(context.Background(), db, box)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var ctx = context.Background()

var runs atomic.Int64

// uniq makes a test's account names and tokens its own, so that the tests also pass run
// again on the same database (-count).
func uniq(name string) string { return fmt.Sprintf("%s-r%d", name, runs.Add(1)) }

func newConnection(t *testing.T, s *Stores, account, token string) channel.Connection {
	t.Helper()
	id, err := s.Connections.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := channel.Connection{Account: account, ID: id, Adapter: channel.Channex, Endpoint: "https://cm.example/api",
		Credentials: channel.Credentials{APIKey: "secret-key-" + account}, Channel: "channex", Enabled: true,
		InboundToken: token, Days: 500, CreatedAt: now, UpdatedAt: now}
	if err := s.Connections.AddConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func rawDoc(t *testing.T, coll, id string) bson.M {
	t.Helper()
	var m bson.M
	if err := db.Collection(coll).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConnectionSealedAndTokenHashed(t *testing.T) {
	s := open(t)
	acc, tok := uniq("acc-seal"), uniq("tok-seal-0123456789")
	c := newConnection(t, s, acc, tok)
	raw := fmt.Sprint(rawDoc(t, ConnectionsColl, connKey(c.Account, c.ID)))
	if strings.Contains(raw, "secret-key") || strings.Contains(raw, "tok-seal") {
		t.Fatalf("a secret is stored in clear: %s", raw)
	}
	got, err := s.Connections.Connection(ctx, c.Account, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.APIKey != "secret-key-"+acc || got.InboundToken != "" || got.Endpoint != c.Endpoint || got.Days != 500 || !got.Enabled {
		t.Fatalf("read back %+v", got)
	}
	byTok, err := s.Connections.ConnectionByToken(ctx, channel.Channex, tok)
	if err != nil || byTok.ID != c.ID || byTok.Account != c.Account || byTok.InboundToken != tok || byTok.APIKey != got.APIKey {
		t.Fatalf("by token: %+v, %v", byTok, err)
	}
	for _, tc := range []struct{ adapter, token string }{
		{channel.OpenTravel, tok}, {channel.Channex, tok + "-unknown"}, {channel.Channex, ""},
	} {
		if _, err := s.Connections.ConnectionByToken(ctx, tc.adapter, tc.token); !errors.Is(err, channel.ErrNotFound) {
			t.Errorf("by token %q of %s: %v, want not found", tc.token, tc.adapter, err)
		}
	}

	// The sealed credentials are bound to their connection: copied to another one, they do
	// not open.
	other := newConnection(t, s, acc, uniq("tok-seal-other"))
	doc := rawDoc(t, ConnectionsColl, connKey(c.Account, c.ID))
	if _, err := db.Collection(ConnectionsColl).UpdateOne(ctx, bson.D{{Key: "_id", Value: connKey(other.Account, other.ID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "credentials", Value: doc["credentials"]}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connections.Connection(ctx, other.Account, other.ID); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("credentials copied to another connection: %v", err)
	}
	// Listed with no credentials (its owner sets them again); never sent with.
	l, err := s.Connections.ListConnections(ctx, acc)
	if err != nil || len(l) != 2 || l[0].APIKey == "" || l[1].APIKey != "" {
		t.Fatalf("list with unreadable credentials: %+v, %v", l, err)
	}
	enabled, err := s.Connections.EnabledConnections(ctx, channel.Channex)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range enabled {
		if e.ID == other.ID {
			t.Fatal("a connection whose credentials do not open is listed for sending")
		}
	}
}

func TestModifyConnection(t *testing.T) {
	s := open(t)
	c := newConnection(t, s, uniq("acc-mod"), uniq("tok-mod-old"))
	oldTok, newTok := c.InboundToken, uniq("tok-mod-new")
	got, err := s.Connections.ModifyConnection(ctx, c.Account, c.ID, func(x *channel.Connection) error {
		if x.InboundToken != "" || x.APIKey != "secret-key-"+c.Account {
			t.Errorf("change sees %+v", x)
		}
		x.Endpoint, x.Days, x.APIKey = "https://cm2.example", 30, "new-key"
		x.Account, x.ID, x.Adapter = "someone-else", 999, channel.OpenTravel // kept as they are
		return nil
	})
	if err != nil || got.Endpoint != "https://cm2.example" || got.Account != c.Account || got.ID != c.ID || got.Adapter != channel.Channex {
		t.Fatalf("modify: %+v, %v", got, err)
	}
	// The token is kept when the change sets none.
	if _, err := s.Connections.ConnectionByToken(ctx, channel.Channex, oldTok); err != nil {
		t.Fatalf("token lost by a change: %v", err)
	}
	// A refused change writes nothing.
	boom := errors.New("refused")
	if _, err := s.Connections.ModifyConnection(ctx, c.Account, c.ID, func(x *channel.Connection) error {
		x.Endpoint = "https://nope.example"
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// Rotation: the new token finds it, the old one no longer does.
	if _, err := s.Connections.ModifyConnection(ctx, c.Account, c.ID, func(x *channel.Connection) error {
		x.InboundToken = newTok
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connections.ConnectionByToken(ctx, channel.Channex, oldTok); !errors.Is(err, channel.ErrNotFound) {
		t.Fatalf("old token after rotation: %v", err)
	}
	now, err := s.Connections.ConnectionByToken(ctx, channel.Channex, newTok)
	if err != nil || now.Endpoint != "https://cm2.example" || now.APIKey != "new-key" || now.Days != 30 {
		t.Fatalf("after rotation: %+v, %v", now, err)
	}
	if _, err := s.Connections.ModifyConnection(ctx, c.Account, 424242, func(*channel.Connection) error { return nil }); !errors.Is(err, channel.ErrNotFound) {
		t.Fatalf("modify of a missing connection: %v", err)
	}
}

// TestConcurrentConnectionChanges: changes of different fields at once all stay.
func TestConcurrentConnectionChanges(t *testing.T) {
	s := open(t)
	c := newConnection(t, s, uniq("acc-conc"), uniq("tok-conc"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Connections.ModifyConnection(ctx, c.Account, c.ID, func(x *channel.Connection) error {
				switch i {
				case 0:
					x.Endpoint = "https://e.example"
				case 1:
					x.Days = 7
				case 2:
					x.Channel = "airbnb"
				case 3:
					x.Enabled = false
				case 4:
					x.APIKey = "k4"
				default:
					x.UpdatedAt = time.Unix(int64(i), 0)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Connections.Connection(ctx, c.Account, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Endpoint != "https://e.example" || got.Days != 7 || got.Channel != "airbnb" || got.Enabled || got.APIKey != "k4" {
		t.Fatalf("a concurrent change was lost: %+v", got)
	}
}

func mapping(c channel.Connection, property int64, room string) channel.Mapping {
	return channel.Mapping{Account: c.Account, ConnectionID: c.ID, PropertyID: property, InternalCode: fmt.Sprint("P", property),
		RemotePropertyID: "rp-1", RoomTypeID: room, RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "r-std"},
			{RatePlanID: 3, RemoteRatePlanID: "r-nr"}}, Enabled: true}
}

func TestMappings(t *testing.T) {
	s := open(t)
	acc := uniq("acc-map")
	c := newConnection(t, s, acc, uniq("tok-map"))
	c2 := newConnection(t, s, acc, uniq("tok-map2"))
	cs := s.Connections
	if err := cs.AddMapping(ctx, mapping(c, 10, "room-a")); err != nil {
		t.Fatal(err)
	}
	if err := cs.AddMapping(ctx, mapping(c, 10, "room-b")); !errors.Is(err, channel.ErrPropertyMapped) {
		t.Fatalf("the property twice: %v", err)
	}
	if err := cs.AddMapping(ctx, mapping(c, 11, "room-a")); !errors.Is(err, channel.ErrRoomMapped) {
		t.Fatalf("the room type twice: %v", err)
	}
	// Another connection may map the same property and the same remote ids.
	if err := cs.AddMapping(ctx, mapping(c2, 10, "room-a")); err != nil {
		t.Fatal(err)
	}
	if err := cs.AddMapping(ctx, mapping(channel.Connection{Account: c.Account, ID: 987654}, 10, "room-z")); !errors.Is(err, channel.ErrNotFound) {
		t.Fatalf("mapping of a missing connection: %v", err)
	}
	if err := cs.AddMapping(ctx, mapping(c, 11, "room-b")); err != nil {
		t.Fatal(err)
	}
	m, err := cs.Mapping(ctx, c.Account, c.ID, 10)
	if err != nil || m.RemotePlan(3) != "r-nr" || m.InternalCode != "P10" || !m.Enabled {
		t.Fatalf("mapping: %+v, %v", m, err)
	}
	byRoom, err := cs.MappingByRoom(ctx, c.Account, c.ID, "rp-1", "room-b")
	if err != nil || byRoom.PropertyID != 11 {
		t.Fatalf("by room: %+v, %v", byRoom, err)
	}
	if _, err := cs.MappingByRoom(ctx, c.Account, c.ID, "rp-2", "room-b"); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conn, prop int64
		want       int
	}{{0, 0, 3}, {c.ID, 0, 2}, {0, 10, 2}, {c2.ID, 11, 0}} {
		l, err := cs.Mappings(ctx, c.Account, tc.conn, tc.prop)
		if err != nil || len(l) != tc.want {
			t.Errorf("mappings of connection %d property %d: %d, %v; want %d", tc.conn, tc.prop, len(l), err, tc.want)
		}
	}
	// A change to another property's room type is refused and changes nothing.
	if _, err := cs.ModifyMapping(ctx, c.Account, c.ID, 11, func(m *channel.Mapping) error {
		m.RoomTypeID, m.Enabled = "room-a", false
		return nil
	}); !errors.Is(err, channel.ErrRoomMapped) {
		t.Fatalf("modify onto another's room: %v", err)
	}
	if m, _ := cs.Mapping(ctx, c.Account, c.ID, 11); m.RoomTypeID != "room-b" || !m.Enabled {
		t.Fatalf("a refused change was written: %+v", m)
	}
	got, err := cs.ModifyMapping(ctx, c.Account, c.ID, 11, func(m *channel.Mapping) error {
		m.RoomTypeID, m.PropertyID = "room-c", 99
		m.RatePlans = m.RatePlans[:1]
		return nil
	})
	if err != nil || got.PropertyID != 11 || got.RoomTypeID != "room-c" || len(got.RatePlans) != 1 {
		t.Fatalf("modify: %+v, %v", got, err)
	}
	if err := cs.DeleteMapping(ctx, c.Account, c.ID, 11); err != nil {
		t.Fatal(err)
	}
	if err := cs.DeleteMapping(ctx, c.Account, c.ID, 11); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	// Deleting a connection deletes its mappings, not the other connection's.
	if err := cs.DeleteConnection(ctx, c.Account, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Connection(ctx, c.Account, c.ID); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	if l, _ := cs.Mappings(ctx, c.Account, 0, 0); len(l) != 1 || l[0].ConnectionID != c2.ID {
		t.Fatalf("after delete: %+v", l)
	}
	if err := cs.DeleteConnection(ctx, c.Account, c.ID); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
}

// TestConcurrentMappings: properties racing for one room type: exactly one gets it.
func TestConcurrentMappings(t *testing.T) {
	s := open(t)
	c := newConnection(t, s, uniq("acc-race"), uniq("tok-race"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for p := range 8 {
		wg.Go(func() {
			err := s.Connections.AddMapping(ctx, mapping(c, int64(100+p), "room-x"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, channel.ErrRoomMapped):
				lost++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != 7 {
		t.Fatalf("won %d, lost %d", won, lost)
	}
}

// TestAccountsApart: two accounts writing at once never see each other's records, and the
// erasure of one leaves the other whole.
func TestAccountsApart(t *testing.T) {
	s := open(t)
	base := uniq("acc-apart")
	accounts := []string{base + "-1", base + "-10"} // one a prefix of the other
	conns := make([]channel.Connection, 2)
	var wg sync.WaitGroup
	for i, a := range accounts {
		wg.Go(func() {
			c := newConnection(t, s, a, "tok-"+a)
			conns[i] = c
			for p := range 5 {
				if err := s.Connections.AddMapping(ctx, mapping(c, int64(p+1), fmt.Sprint("room", p))); err != nil {
					t.Error(err)
				}
				if err := s.Log.Append(ctx, channel.LogEntry{Account: a, ConnectionID: c.ID, PropertyID: int64(p + 1),
					Direction: "out", Kind: channel.KindAvailability, Status: channel.StatusOK, Request: "req " + a}); err != nil {
					t.Error(err)
				}
				if _, _, err := s.Conflicts.Record(ctx, channel.Conflict{Account: a, ConnectionID: c.ID,
					RevisionID: fmt.Sprint("rev", p), Reason: channel.ReasonNightsTaken}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, a := range accounts {
		other := conns[1-i]
		if _, err := s.Connections.Connection(ctx, a, other.ID); !errors.Is(err, channel.ErrNotFound) {
			t.Errorf("%s reads the other's connection: %v", a, err)
		}
		if _, err := s.Connections.ModifyConnection(ctx, a, other.ID, func(*channel.Connection) error { return nil }); !errors.Is(err, channel.ErrNotFound) {
			t.Errorf("%s changes the other's connection: %v", a, err)
		}
		if err := s.Connections.DeleteConnection(ctx, a, other.ID); !errors.Is(err, channel.ErrNotFound) {
			t.Errorf("%s deletes the other's connection: %v", a, err)
		}
		if err := s.Connections.AddMapping(ctx, mapping(channel.Connection{Account: a, ID: other.ID}, 50, "r50")); !errors.Is(err, channel.ErrNotFound) {
			t.Errorf("%s maps on the other's connection: %v", a, err)
		}
		cl, _ := s.Connections.ListConnections(ctx, a)
		ml, _ := s.Connections.Mappings(ctx, a, 0, 0)
		ll, _ := s.Log.List(ctx, a, channel.LogFilter{})
		fl, _ := s.Conflicts.List(ctx, a, false)
		if len(cl) != 1 || len(ml) != 5 || len(ll) != 5 || len(fl) != 5 {
			t.Fatalf("%s sees %d connections, %d mappings, %d log entries, %d conflicts", a, len(cl), len(ml), len(ll), len(fl))
		}
		for _, e := range ll {
			if e.Account != a || e.Request != "req "+a {
				t.Fatalf("%s sees %+v", a, e)
			}
			if _, err := s.Log.Get(ctx, accounts[1-i], e.ID); !errors.Is(err, channel.ErrNotFound) {
				t.Errorf("the other account reads %s's log entry: %v", a, err)
			}
		}
		for _, f := range fl {
			if _, err := s.Conflicts.Get(ctx, accounts[1-i], f.ID); !errors.Is(err, channel.ErrNotFound) {
				t.Errorf("the other account reads %s's conflict: %v", a, err)
			}
			if _, err := s.Conflicts.Resolve(ctx, accounts[1-i], f.ID, "x", time.Now()); !errors.Is(err, channel.ErrNotFound) {
				t.Errorf("the other account resolves %s's conflict: %v", a, err)
			}
		}
	}
	if err := s.Erase(ctx, accounts[0]); err != nil {
		t.Fatal(err)
	}
	if cl, _ := s.Connections.ListConnections(ctx, accounts[0]); len(cl) != 0 {
		t.Fatalf("erased account keeps %d connections", len(cl))
	}
	if _, err := s.Connections.ConnectionByToken(ctx, channel.Channex, "tok-"+accounts[0]); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	cl, _ := s.Connections.ListConnections(ctx, accounts[1])
	ml, _ := s.Connections.Mappings(ctx, accounts[1], 0, 0)
	ll, _ := s.Log.List(ctx, accounts[1], channel.LogFilter{})
	fl, _ := s.Conflicts.List(ctx, accounts[1], false)
	if len(cl) != 1 || len(ml) != 5 || len(ll) != 5 || len(fl) != 5 {
		t.Fatalf("the other account lost records: %d %d %d %d", len(cl), len(ml), len(ll), len(fl))
	}
}

func TestEnabledConnections(t *testing.T) {
	s := open(t)
	a := newConnection(t, s, uniq("acc-en-1"), uniq("tok-en-1"))
	b := newConnection(t, s, uniq("acc-en-2"), uniq("tok-en-2"))
	if _, err := s.Connections.ModifyConnection(ctx, b.Account, b.ID, func(c *channel.Connection) error { c.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	l, err := s.Connections.EnabledConnections(ctx, channel.Channex)
	if err != nil {
		t.Fatal(err)
	}
	found := map[int64]bool{}
	for _, c := range l {
		found[c.ID] = true
		if !c.Enabled || c.Adapter != channel.Channex || c.APIKey == "" {
			t.Errorf("enabled connection %+v", c)
		}
	}
	if !found[a.ID] || found[b.ID] {
		t.Fatalf("enabled: %v", found)
	}
}

func TestLog(t *testing.T) {
	s := open(t)
	acc := uniq("acc-log")
	base := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 30 {
		e := channel.LogEntry{Account: acc, ConnectionID: int64(1 + i%2), PropertyID: int64(10 + i%3), Direction: "out",
			Kind: []string{channel.KindAvailability, channel.KindRates}[i%2], Status: channel.StatusOK,
			Request: fmt.Sprintf(`{"n":%d,"marker":"m(%d)"}`, i, i%5), At: base.Add(time.Duration(i) * time.Minute), Duration: 1500 * time.Millisecond}
		if i == 7 {
			e.Status, e.Error, e.HTTPStatus = channel.StatusError, "Rate plan NOT found", 422
		}
		if err := s.Log.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Log.List(ctx, acc, channel.LogFilter{Limit: 200})
	if err != nil || len(all) != 30 {
		t.Fatalf("list: %d, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID || all[i].At.After(all[i-1].At) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	if all[0].Duration != 1500*time.Millisecond || all[0].Request != `{"n":29,"marker":"m(4)"}` {
		t.Fatalf("newest: %+v", all[0])
	}
	// Pages of 7 by cursor give every entry once, in order.
	var paged []int64
	cursor := int64(0)
	for {
		page, err := s.Log.List(ctx, acc, channel.LogFilter{Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			paged = append(paged, e.ID)
		}
		cursor = page[len(page)-1].ID
	}
	if len(paged) != 30 || paged[0] != all[0].ID || paged[29] != all[29].ID {
		t.Fatalf("paged %d entries", len(paged))
	}
	count := func(f channel.LogFilter) int {
		t.Helper()
		f.Limit = 200
		l, err := s.Log.List(ctx, acc, f)
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	for name, tc := range map[string]struct {
		f    channel.LogFilter
		want int
	}{
		"connection":          {channel.LogFilter{ConnectionID: 1}, 15},
		"property":            {channel.LogFilter{PropertyID: 10}, 10},
		"connection+property": {channel.LogFilter{ConnectionID: 1, PropertyID: 10}, 5},
		"kind":                {channel.LogFilter{Kind: channel.KindRates}, 15},
		"status":              {channel.LogFilter{Status: channel.StatusError}, 1},
		"from":                {channel.LogFilter{From: base.Add(20 * time.Minute)}, 10},
		"to":                  {channel.LogFilter{To: base.Add(5 * time.Minute)}, 5},
		"range":               {channel.LogFilter{From: base.Add(5 * time.Minute), To: base.Add(8 * time.Minute)}, 3},
		"q error any case":    {channel.LogFilter{Q: "not FOUND"}, 1},
		"q regexp characters": {channel.LogFilter{Q: "m(3)"}, 6},
		"q dot is a dot":      {channel.LogFilter{Q: "m(.)"}, 0},
		"default limit":       {channel.LogFilter{}, 30},
	} {
		if got := count(tc.f); got != tc.want {
			t.Errorf("%s: %d entries, want %d", name, got, tc.want)
		}
	}
	if l, _ := s.Log.List(ctx, acc, channel.LogFilter{}); len(l) != DefaultLogLimit && len(l) != 30 {
		t.Errorf("default limit: %d", len(l))
	}
	if _, err := s.Log.Get(ctx, acc, 1); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	e, err := s.Log.Get(ctx, acc, all[22].ID)
	if err != nil || e.Status != channel.StatusError || e.HTTPStatus != 422 {
		t.Fatalf("get: %+v, %v", e, err)
	}
}

func TestLogCutsBodies(t *testing.T) {
	s := open(t)
	acc := uniq("acc-cut")
	long := strings.Repeat("é", MaxBody) // two bytes each
	if err := s.Log.Append(ctx, channel.LogEntry{Account: acc, Request: long, Response: "short"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Log.Append(ctx, channel.LogEntry{Account: acc, Request: "short", Response: "fine"}); err != nil {
		t.Fatal(err)
	}
	l, err := s.Log.List(ctx, acc, channel.LogFilter{})
	if err != nil || len(l) != 2 {
		t.Fatal(len(l), err)
	}
	if l[0].Truncated || l[0].Request != "short" {
		t.Fatalf("short entry: %+v", l[0])
	}
	if !l[1].Truncated || len(l[1].Request) != MaxBody || l[1].Request != long[:MaxBody] || l[1].Response != "short" {
		t.Fatalf("long entry: truncated %v, %d bytes", l[1].Truncated, len(l[1].Request))
	}
	if cut, ok := Cut("aé", 2); cut != "a" || !ok {
		t.Fatalf("cut within a character: %q", cut)
	}
}

func TestLogConcurrentAppendsAndPrune(t *testing.T) {
	s := open(t)
	acc := uniq("acc-logc")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				if err := s.Log.Append(ctx, channel.LogEntry{Account: acc, Request: fmt.Sprint(w, "/", i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l, err := s.Log.List(ctx, acc, channel.LogFilter{Limit: 200})
	if err != nil || len(l) != 100 {
		t.Fatalf("%d entries, %v", len(l), err)
	}
	seen := map[string]bool{}
	for _, e := range l {
		seen[e.Request] = true
	}
	if len(seen) != 100 {
		t.Fatalf("%d distinct entries", len(seen))
	}
	old := time.Now().Add(-LogRetention - time.Hour)
	if err := s.Log.Append(ctx, channel.LogEntry{Account: acc, Request: "old", At: old}); err != nil {
		t.Fatal(err)
	}
	if err := s.Log.Prune(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Log.List(ctx, acc, channel.LogFilter{Q: "old", Limit: 200}); len(l) != 0 {
		t.Fatalf("pruned entry kept: %+v", l)
	}
	if l, _ := s.Log.List(ctx, acc, channel.LogFilter{Limit: 200}); len(l) != 100 {
		t.Fatalf("prune took recent entries: %d left", len(l))
	}
}

func TestConflicts(t *testing.T) {
	s := open(t)
	acc := uniq("acc-conf")
	c := channel.Conflict{Account: acc, ConnectionID: 5, ReservationID: "res-1", RevisionID: "rev-1", PropertyID: 12,
		Checkin: "2027-01-10", Checkout: "2027-01-13", Reason: channel.ReasonNightsTaken, Nights: []string{"2027-01-11"},
		BookingIDs: []int64{77}, GuestName: "Ada L", Total: "450.00", Currency: "EUR"}
	first, created, err := s.Conflicts.Record(ctx, c)
	if err != nil || !created || first.ID == 0 {
		t.Fatalf("record: %+v %v %v", first, created, err)
	}
	again, created, err := s.Conflicts.Record(ctx, c)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("record again: %+v %v %v", again, created, err)
	}
	// The same revision id on another connection is another conflict.
	c2 := c
	c2.ConnectionID = 6
	if _, created, err := s.Conflicts.Record(ctx, c2); err != nil || !created {
		t.Fatal(created, err)
	}
	// Concurrent records of one revision: one stored, every caller answered it.
	c3 := c
	c3.RevisionID = "rev-race"
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[int64]int{}
	createdN := 0
	for range 6 {
		wg.Go(func() {
			got, created, err := s.Conflicts.Record(ctx, c3)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[got.ID]++
			if created {
				createdN++
			}
		})
	}
	wg.Wait()
	if len(ids) != 1 || createdN != 1 {
		t.Fatalf("concurrent records: ids %v, created %d", ids, createdN)
	}
	got, err := s.Conflicts.Get(ctx, acc, first.ID)
	if err != nil || got.GuestName != "Ada L" || got.Nights[0] != "2027-01-11" || got.BookingIDs[0] != 77 || got.ResolvedAt != nil {
		t.Fatalf("get: %+v, %v", got, err)
	}
	at := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	res, err := s.Conflicts.Resolve(ctx, acc, first.ID, "moved the guest", at)
	if err != nil || res.ResolvedAt == nil || !res.ResolvedAt.Equal(at) || res.Note != "moved the guest" {
		t.Fatalf("resolve: %+v, %v", res, err)
	}
	res, err = s.Conflicts.Resolve(ctx, acc, first.ID, "second note", at.Add(time.Hour))
	if err != nil || !res.ResolvedAt.Equal(at) || res.Note != "second note" {
		t.Fatalf("resolve again: %+v, %v", res, err)
	}
	if _, err := s.Conflicts.Resolve(ctx, acc, 99999, "", at); !errors.Is(err, channel.ErrNotFound) {
		t.Fatal(err)
	}
	open, _ := s.Conflicts.List(ctx, acc, true)
	all, _ := s.Conflicts.List(ctx, acc, false)
	if len(open) != 2 || len(all) != 3 {
		t.Fatalf("open %d, all %d", len(open), len(all))
	}
	if all[2].ID != first.ID || all[0].ResolvedAt != nil || all[0].ID < all[1].ID {
		t.Fatalf("order: open first, newest first, then resolved: %+v", all)
	}
	// Recording a resolved conflict's revision again does not reopen it.
	if again, created, err := s.Conflicts.Record(ctx, c); err != nil || created || again.ResolvedAt == nil {
		t.Fatalf("record of a resolved one: %+v %v %v", again, created, err)
	}
}
