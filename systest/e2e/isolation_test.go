package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/systest/apitest"
)

// tenant is one account of the isolation test with the data that makes its answers
// recognisable: a marker that stands in its property names, guest names and gateway
// secrets, and a nightly price no other tenant has.
type tenant struct {
	account
	marker string
	price  int
	pids   []int
}

// isolationCall is one request a tenant sends, with what its answer must show.
type isolationCall struct {
	name   string
	method string
	path   string
	header map[string]string
	body   string
	// check inspects a decoded 200 answer; it returns what is wrong, or "".
	check func(body []byte) string
}

// TestTenantIsolationUnderLoad: 8 accounts, each with its own properties, gateway secrets,
// guests and prices, send 5 000 mixed requests through edge from 50 concurrent clients on
// shared keep-alive connections: every interface (A writes; B quotes, bookings, lists,
// payment methods, calendars; owner-token reads), small and large answers. Every answer
// must be whole JSON in its interface's envelope, carry its own tenant's data where it
// has any, and never a byte of another tenant's.
func TestTenantIsolationUnderLoad(t *testing.T) {
	const (
		tenants  = 8
		clients  = 50
		requests = 5000
	)
	ts := make([]*tenant, tenants)
	var wg sync.WaitGroup
	for i := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts[i] = setupTenant(t, i)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	markers := make([]string, tenants)
	for i, tn := range ts {
		markers[i] = tn.marker
	}

	client := &http.Client{Timeout: 60 * time.Second,
		Transport: apiContract.Through(&http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients})}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		problems []string
		wrong    int
		byCall   = map[string]time.Duration{}
		bytesIn  atomic.Int64
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		wrong++
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > requests {
					return
				}
				tn := ts[int(n)%tenants]
				call := tn.call(int(n))
				began := time.Now()
				r, err := apitest.Send(client, call.method, st.EdgeURL+call.path, call.header, call.body)
				body, code := r.Body, r.Code
				if err != nil {
					report("%s %s: %v", tn.marker, call.name, err)
					continue
				}
				bytesIn.Add(int64(len(body)))
				mu.Lock()
				byCall[call.name] += time.Since(began) / (requests / 10)
				mu.Unlock()
				for j, m := range markers {
					if j != int(n)%tenants && bytes.Contains(body, []byte(m)) {
						report("%s %s: answer carries %s's data: %.300s", tn.marker, call.name, m, body)
					}
				}
				if !json.Valid(body) {
					report("%s %s: HTTP %d, not one JSON value: %.300s", tn.marker, call.name, code, body)
					continue
				}
				// create may find its night taken (status 8, on HTTP 200): no tenant data.
				if code == http.StatusOK && call.name == "create" && bStatus(body) == 8 {
					continue
				}
				if code != http.StatusOK {
					report("%s %s: HTTP %d: %.300s", tn.marker, call.name, code, body)
					continue
				}
				if msg := call.check(body); msg != "" {
					report("%s %s: %s: %.300s", tn.marker, call.name, msg, body)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d requests from %d clients for %d tenants in %s (%.0f req/s, %d KiB answered); mean latency by call: %v",
		requests, clients, tenants, elapsed.Round(time.Millisecond), requests/elapsed.Seconds(), bytesIn.Load()>>10, byCall)
	if wrong > 0 {
		t.Fatalf("%d findings in %d answers; the first ones:\n%s", wrong, requests, strings.Join(problems, "\n"))
	}
}

// setupTenant creates account i with two bookable properties named after its marker,
// priced at its own rate, with gateway secrets and a booking whose guest carries the
// marker too.
func setupTenant(t *testing.T, i int) *tenant {
	tn := &tenant{account: newAccount(t), price: 101 + i}
	tn.marker = fmt.Sprintf("Tnt%dX%s", i, strconv.FormatUint(rand.Uint64()>>20, 36))
	for k := 0; k < 2; k++ {
		code := fmt.Sprintf("ISO%d", k)
		p := validProperty(code)
		p["name"] = "Villa " + tn.marker + " number " + strconv.Itoa(k)
		r := tn.a(t, "property", obj{"action": "create", "property": p})
		r.status(t, http.StatusOK)
		var out struct {
			Data struct {
				PropertyID string `json:"property_id"`
			} `json:"data"`
		}
		r.decode(t, &out)
		pid, _ := strconv.Atoi(out.Data.PropertyID)
		rates := simpleRates(code)
		rates["rate"] = obj{"daily_price": tn.price, "minimum_stay": 1}
		tn.a(t, "property-rate", rates).status(t, http.StatusOK)
		tn.a(t, "property-method", obj{"internal_code": code,
			"stripe": obj{"secret_key": "sk_" + tn.marker, "public_key": "pk_" + tn.marker},
			"paypal": obj{"email": strings.ToLower(tn.marker) + "@example.com"},
		}).status(t, http.StatusOK)
		waitVersion(t, tn.account, pid)
		tn.pids = append(tn.pids, pid)
	}
	g := tn.guest(0, day(400), day(401))
	g["checkin"], g["checkout"] = day(360), day(362)
	create(t, tn.account, g)
	// catalog-svc is fed by events too: wait until it shows each property at its price.
	for _, pid := range tn.pids {
		comp := tn.AccountID + "_" + strconv.Itoa(pid)
		var cal []struct {
			Price json.Number `json:"price"`
		}
		eventually(t, "catalog-svc prices "+comp, func() bool {
			return tn.try(t, "getcalendar", obj{"propertyId": comp, "startDate": day(0), "endDate": day(1)}, &cal) &&
				len(cal) > 0 && cal[0].Price.String() == strconv.Itoa(tn.price)
		})
	}
	return tn
}

// guest is a booking party that carries the tenant's marker.
func (tn *tenant) guest(k int, checkin, checkout string) obj {
	g := guest(tn.pids[k%len(tn.pids)], checkin, checkout)
	g["firstName"] = "Guest" + tn.marker
	g["email"] = strings.ToLower(tn.marker) + "@guest.example.com"
	return g
}

// call is request n of this tenant: one of the mix, chosen by n.
func (tn *tenant) call(n int) isolationCall {
	pid := tn.pids[n%len(tn.pids)]
	spid := strconv.Itoa(pid)
	comp := tn.AccountID + "_" + spid
	own := func(body []byte) string {
		if !bytes.Contains(body, []byte(tn.marker)) {
			return "own data missing"
		}
		return ""
	}
	price := func(body []byte) string {
		if !bytes.Contains(body, []byte(`"price":`+strconv.Itoa(tn.price))) && !bytes.Contains(body, []byte(`"price":"`+strconv.Itoa(tn.price))) {
			return "own nightly price missing"
		}
		return ""
	}
	b := func(name string, fields obj, check func([]byte) string) isolationCall {
		return isolationCall{name: name, method: http.MethodPost, path: "/vros/external-booking", body: tn.BBody(name, fields),
			check: func(ans []byte) string {
				var a bAnswer
				if err := json.Unmarshal(ans, &a); err != nil || a.Status != 0 || a.Message != "Success" {
					return "not a success envelope"
				}
				return check(ans)
			}}
	}
	read := func(name string) isolationCall {
		return isolationCall{name: name, method: http.MethodGet, path: "/vros/api/" + name + "/owner_token/" + tn.OwnerToken + "/property/" + spid, check: own}
	}
	switch n % 10 {
	case 0:
		return b("getpayment", obj{"propertyId": pid}, func(ans []byte) string {
			if !bytes.Contains(ans, []byte("sk_"+tn.marker)) {
				return "own secret key missing"
			}
			return ""
		})
	case 1:
		return b("listbooking", obj{"limit": 50}, own)
	case 2:
		return b("getcalendar", obj{"propertyId": comp, "startDate": day(0)}, price)
	case 3:
		return b("getinfo", obj{"propertyId": pid, "numberofadults": 2, "checkin": day(30), "checkout": day(37)}, own)
	case 4:
		// One night each, spread over the year: most succeed, a repeated night answers 8.
		g := tn.guest(n, day(2+n/20%340), day(3+n/20%340))
		return b("create", g, own)
	case 5:
		return b("getproperties", obj{}, own)
	case 6:
		return read("property-detail")
	case 7:
		return b("getpropertyinfo", obj{"propertyId": comp}, own)
	case 8:
		// An interface A write: its small answer names the property it changed.
		p := validProperty(fmt.Sprintf("ISO%d", n%2))
		p["name"] = "Villa " + tn.marker + " number " + strconv.Itoa(n%2)
		return isolationCall{name: "property update", method: http.MethodPost, path: "/api/property", header: tn.AHeaders(),
			body: apitest.JSON(obj{"action": "update", "property": p}),
			check: func(ans []byte) string {
				var a struct {
					Code int `json:"code"`
					Data struct {
						PropertyID string `json:"property_id"`
					} `json:"data"`
				}
				if err := json.Unmarshal(ans, &a); err != nil || a.Code != 200 || a.Data.PropertyID != strconv.Itoa(tn.pids[n%2]) {
					return "not this tenant's property id"
				}
				return ""
			}}
	default:
		return isolationCall{name: "get-min-max-price-property", method: http.MethodGet,
			path: "/vros/api/get-min-max-price-property/owner_token/" + tn.OwnerToken + "/property/" + spid,
			check: func(ans []byte) string {
				if !bytes.Contains(ans, []byte(strconv.Itoa(tn.price))) {
					return "own price missing"
				}
				return ""
			}}
	}
}
