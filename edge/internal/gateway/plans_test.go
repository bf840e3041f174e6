package gateway_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

func okStub() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
	})
}

func (e *limitedEdge) setPlan(t *testing.T, id string, p account.Plan) {
	t.Helper()
	if _, err := e.accounts.SetPlan(context.Background(), id, p); err != nil {
		t.Fatal(err)
	}
}

// TestPlanRate: an account's plan replaces the default bucket's rate and burst, and a
// changed plan applies to the account's bucket from its next request (no stale bucket);
// another account keeps the default.
func TestPlanRate(t *testing.T) {
	e := startLimitedEdge(t, 0, 0, okStub())
	id, c := e.newLimitedAccount(t)
	_, other := e.newLimitedAccount(t)
	key := c[account.Key]
	e.setPlan(t, id, account.Plan{RateRPS: 0.001, RateBurst: 3})
	for i := range 3 {
		if a := e.interfaceB(t, "", key.Identifier, key.Secret); a.code != 200 {
			t.Fatalf("request %d of a burst of 3: HTTP %d %s", i+1, a.code, a.body)
		}
	}
	refused := e.interfaceB(t, "", key.Identifier, key.Secret)
	wantB(t, refused, 429, httpapi.StatusRateLimited)
	wantA(t, e.interfaceA(t, "", c, c[account.ServiceKey].Secret), 429, "rate_limited")
	for range 10 {
		if a := e.interfaceB(t, "", other[account.Key].Identifier, other[account.Key].Secret); a.code != 200 {
			t.Fatalf("an account without a plan (no default rate) refused: HTTP %d", a.code)
		}
	}
	// A faster plan: the same bucket refills at its rate at once.
	e.setPlan(t, id, account.Plan{RateRPS: 1000, RateBurst: 3})
	e.interfaceB(t, "", key.Identifier, key.Secret) // the first request under the plan applies it
	time.Sleep(10 * time.Millisecond)
	for i := range 3 {
		if a := e.interfaceB(t, "", key.Identifier, key.Secret); a.code != 200 {
			t.Fatalf("request %d after the plan went to 1000/s: HTTP %d %s", i+1, a.code, a.body)
		}
	}
	// Back to the default (zero plan; edge's default here is no rate): never refused.
	e.setPlan(t, id, account.Plan{})
	for range 20 {
		if a := e.interfaceB(t, "", key.Identifier, key.Secret); a.code != 200 {
			t.Fatalf("the zero plan (edge's default, none) refused: HTTP %d", a.code)
		}
	}
}

// TestPlanConcurrency: the plan's MaxConcurrent replaces the default limit, lower or higher.
func TestPlanConcurrency(t *testing.T) {
	tests := []struct {
		name         string
		defaultLimit int
		plan         int
		admitted     int // requests held at once before one is refused
	}{
		{name: "plan lowers the default", defaultLimit: 8, plan: 1, admitted: 1},
		{name: "plan raises the default", defaultLimit: 1, plan: 3, admitted: 3},
		{name: "plan without a default", defaultLimit: 0, plan: 2, admitted: 2},
		{name: "zero plan keeps the default", defaultLimit: 2, plan: 0, admitted: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &blockingStub{release: make(chan struct{})}
			e := startLimitedEdge(t, tt.defaultLimit, 20*time.Millisecond, stub)
			id, c := e.newLimitedAccount(t)
			e.setPlan(t, id, account.Plan{MaxConcurrent: tt.plan})
			key := c[account.Key]
			var wg sync.WaitGroup
			for range tt.admitted {
				wg.Add(1)
				go func() { defer wg.Done(); e.interfaceB(t, "", key.Identifier, key.Secret) }()
			}
			deadline := time.Now().Add(5 * time.Second)
			for e.gw.InFlight(id) < tt.admitted {
				if time.Now().After(deadline) {
					t.Fatalf("%d in flight, want %d admitted", e.gw.InFlight(id), tt.admitted)
				}
				time.Sleep(time.Millisecond)
			}
			wantB(t, e.interfaceB(t, "", key.Identifier, key.Secret), 429, httpapi.StatusRateLimited)
			close(stub.release)
			wg.Wait()
			e.settled(t, id)
		})
	}
}

// TestPlanBodyLimit: the plan's BodyLimit replaces a route's body limit for the account,
// smaller or larger, never above MaxBody; without credentials (or with wrong ones) a body
// over the route's own limit is still refused 413 with that limit.
func TestPlanBodyLimit(t *testing.T) {
	for _, tt := range []struct {
		route, plan, want int
	}{
		{1 << 20, 0, 1 << 20},
		{1 << 20, 100, 100},
		{1 << 20, 2 << 20, 2 << 20},
		{64 << 10, 1 << 30, gateway.MaxBody},
	} {
		if got := gateway.BodyLimit(tt.route, account.Plan{BodyLimit: tt.plan}); got != tt.want {
			t.Errorf("BodyLimit(%d, plan %d) = %d, want %d", tt.route, tt.plan, got, tt.want)
		}
	}

	e := startLimitedEdge(t, 0, 0, okStub())
	smallID, small := e.newLimitedAccount(t)
	largeID, large := e.newLimitedAccount(t)
	_, plain := e.newLimitedAccount(t)
	e.setPlan(t, smallID, account.Plan{BodyLimit: 200})
	e.setPlan(t, largeID, account.Plan{BodyLimit: 3 << 20})

	bBody := func(c credentials, size int) string {
		head := fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax","pad":"`, c[account.Key].Identifier, c[account.Key].Secret)
		return head + strings.Repeat("x", max(size-len(head)-2, 0)) + `"}`
	}
	aSend := func(c credentials, size int) answer {
		basic := base64.StdEncoding.EncodeToString([]byte(c[account.Basic].Identifier + ":" + c[account.Basic].Secret))
		body := `{"action":"list","pad":"` + strings.Repeat("x", size) + `"}`
		return e.send(t, "", http.MethodPost, "/api/property-policy", map[string]string{"Content-Type": "application/json",
			"Authorization": "Basic " + basic, "servicekey": c[account.ServiceKey].Identifier, "servicepass": c[account.ServiceKey].Secret}, body)
	}
	read := func(c credentials, size int) answer {
		return e.send(t, "", http.MethodPost, "/vros/api/default-config/owner_token/"+c[account.OwnerToken].Secret,
			map[string]string{"Content-Type": "application/json"}, `{"pad":"`+strings.Repeat("x", size)+`"}`)
	}
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name    string
		send    func() answer
		code    int
		message string
	}{
		{"B: small plan, 300 bytes", func() answer {
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(small, 300))
		}, 413, "larger than 200 bytes"},
		{"B: small plan, 150 bytes", func() answer {
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(small, 150))
		}, 200, ""},
		{"B: large plan, 2 MiB", func() answer {
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(large, 2<<20))
		}, 200, ""},
		{"B: large plan, 4 MiB", func() answer {
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(large, 4<<20))
		}, 413, "larger than 3145728 bytes"},
		{"B: no plan, 2 MiB", func() answer {
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(plain, 2<<20))
		}, 413, "larger than 1048576 bytes"},
		{"B: wrong pass, 2 MiB", func() answer {
			wrong := credentials{account.Key: account.Secret{Kind: account.Key, Identifier: large[account.Key].Identifier, Secret: "wrong"}}
			return e.send(t, "", http.MethodPost, "/vros/external-booking", json, bBody(wrong, 2<<20))
		}, 413, "larger than 1048576 bytes"},
		{"A: small plan, 300 bytes", func() answer { return aSend(small, 300) }, 413, "larger than 200 bytes"},
		{"A: large plan, 512 KiB (route 256 KiB)", func() answer { return aSend(large, 512<<10) }, 200, ""},
		{"A: no plan, 512 KiB", func() answer { return aSend(plain, 512<<10) }, 413, "larger than 262144 bytes"},
		{"read: large plan, 100 KiB (route 64 KiB)", func() answer { return read(large, 100<<10) }, 200, ""},
		{"read: no plan, 100 KiB", func() answer { return read(plain, 100<<10) }, 413, "larger than 65536 bytes"},
		{"read: small plan, 300 bytes", func() answer { return read(small, 300) }, 413, "larger than 200 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.send()
			if a.code != tt.code || !strings.Contains(string(a.body), tt.message) {
				t.Fatalf("HTTP %d %s, want %d with %q", a.code, a.body, tt.code, tt.message)
			}
		})
	}
}
