package bench

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

const searchProperties = 1000

// searchAccount is the account of BenchmarkSearchRental on one stack: its own, so that its
// 1 000 properties are not in the other benchmarks' account.
type searchAccount struct {
	credentials
}

var (
	searchMu       sync.Mutex
	searchAccounts = map[*store]*searchAccount{}
)

// setupSearch opens, once per stack, an account with 1 000 properties created through
// interface A (five cities, one to five bedrooms, 80–179 a night, any day in and out) and
// waits until the catalog lists them all.
func (s *store) setupSearch(b *testing.B) *searchAccount {
	searchMu.Lock()
	defer searchMu.Unlock()
	if acc := searchAccounts[s]; acc != nil {
		return acc
	}
	start := time.Now()
	creds, err := openAccount(s.st.EdgeURL, "bench-admin")
	if err != nil {
		b.Fatal("search account:", err)
	}
	acc := &searchAccount{creds}
	headers := acc.aHeaders()
	cities := []string{"Miami Beach", "Lucca", "Nice", "Porto", "Split"}
	err = inParallel(searchProperties, 8, func(i int) error {
		i++ // 1 to searchProperties
		code := fmt.Sprintf("SRCH%04d", i)
		p := fmt.Sprintf(`{"action":"create","property":{"internal_code":%q,"name":"Seaside Villa number %04d","type":"Villa",`+
			`"maxguest":%d,"bedrooms":%d,"bathrooms":1,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},`+
			`"address":"%d Ocean Drive","city":%q,"state":"FL","postcode":"33139","country":"US","latitude":25.79,"longitude":-80.13}}`,
			code, i, 2+i%7, 1+i%5, i, cities[i%len(cities)])
		if st, body := send("POST", s.st.EdgeURL+"/api/property", headers, []byte(p)); st != 200 {
			return fmt.Errorf("property %s: %d %s", code, st, body)
		}
		if st, body := send("POST", s.st.EdgeURL+"/api/property-rate", headers, rates(code, 80+i%100)); st != 200 {
			return fmt.Errorf("rates %s: %d %s", code, st, body)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// The catalog is fed by events: wait until it lists every property with its rates.
	url := s.st.EdgeURL + "/vros/api/search-rental/owner_token/" + acc.OwnerToken
	probe := []byte(fmt.Sprintf(`{"checkin":%q,"checkout":%q,"limit":"1"}`, day(30), day(37)))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := send("POST", url, noHeaders(), probe)
		var ans struct {
			Count int `json:"property_count"`
		}
		if answered(code, body) && json.Unmarshal(body, &ans) == nil && ans.Count == searchProperties {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: the catalog never listed the %d search properties: %d %s", s.name, searchProperties, code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Logf("%s: %d search properties set up in %v", s.name, searchProperties, time.Since(start).Round(100*time.Millisecond))
	searchAccounts[s] = acc
	return acc
}

// BenchmarkSearchRental: the website search with dates (a 7-night stay, two adults, the
// first page of 10) over 1 000 properties, through edge on each stack, beside the bare Fiber
// baseline answering the same request; "by-price" sorts by the stay's price, which quotes
// every bookable property instead of the page only.
func BenchmarkSearchRental(b *testing.B) {
	search := func(extra string) []byte {
		return []byte(fmt.Sprintf(`{"checkin":%q,"checkout":%q,"numberadults":"2","page":"1","limit":"10"%s}`, day(30), day(37), extra))
	}
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/vros/external-booking", noHeaders, search("")) })
	b.Run("bare-fiber-2-clients", func(b *testing.B) { loadClients(b, 1, bareURL+"/vros/external-booking", search("")) })
	eachStore(b, func(b *testing.B, s *store) {
		acc := s.setupSearch(b)
		url := s.st.EdgeURL + "/vros/api/search-rental/owner_token/" + acc.OwnerToken
		sameBytes(b, url, noHeaders, search(""))
		edgeLoads(b, url, noHeaders, once(search("")))
		b.Run("edge-by-price", func(b *testing.B) { load(b, url, noHeaders, search(`,"sortby":"4"`)) })
		// The latency of one search when the machine is not saturated: 2 clients (one per
		// core) instead of 16, whose p99 is mostly time spent queued behind the others.
		b.Run("edge-2-clients", func(b *testing.B) { loadClients(b, 1, url, search("")) })
	})
}

// loadClients is load with parallelism × GOMAXPROCS clients.
func loadClients(b *testing.B, parallelism int, url string, body []byte) {
	loadParallel(b, parallelism, url, noHeaders, func() []byte { return body })
}
